// One bot's page: its leaderboard row, score-per-deal distribution, strikes and
// matches (each with a replay link). (The API sends its rating history too; no plot of it here.)
"use strict";

const botName = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const MATCH_PAGE = 50;  // matches read at each "older matches" click
// ?vs=B: only the matches against B (a head to head cell's link; the selector over the list)
const VS = qs("vs") || null;

// The middle value of `total` values, given as [value, count] pairs in ascending order; of
// an even number of values, the mean of the two middle ones.
function median(pairs, total) {
  const nth = (k) => { for (const [v, n] of pairs) { if (k < n) return v; k -= n; } return NaN; };
  const mid = Math.floor(total / 2);
  return total % 2 ? nth(mid) : (nth(mid - 1) + nth(mid)) / 2;
}

// The least and the greatest of the values, by a loop: Math.min(...values) passes every
// value as an argument, past ~120,000 of them "Maximum call stack size exceeded".
function extent(values) {
  let lo = Infinity, hi = -Infinity;
  for (const v of values) { if (v < lo) lo = v; if (v > hi) hi = v; }
  return [lo, hi];
}

// `pairs`: [score, how many deals scored it], ascending (the server counts them: a bot of
// 12,000 matches sent 24,000 scores).
function histogram(pairs) {
  const wrap = el("div", { id: "score-hist" });
  if (!pairs.length) { wrap.append(el("p", { class: "muted" }, "No deals yet.")); return wrap; }
  const W = 900, H = 260, L = 44, R = 10, T = 10, B = 40;
  const lo = pairs[0][0], hi = pairs[pairs.length - 1][0];
  const width = Math.max(10, Math.ceil((hi - lo + 1) / 30 / 10) * 10);
  const start = Math.floor(lo / width) * width;
  const nb = Math.max(1, Math.floor((hi - start) / width) + 1);
  const counts = new Array(nb).fill(0);
  for (const [v, n] of pairs) counts[Math.floor((v - start) / width)] += n;
  const cmax = extent(counts)[1];
  const X = (i) => L + ((W - L - R) * i) / nb, Y = (c) => T + (H - T - B) * (1 - c / cmax);
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot hist" });
  counts.forEach((c, i) => {
    if (!c) return;
    s.append(svg("rect", { x: X(i) + 1, y: Y(c), width: Math.max(1, X(i + 1) - X(i) - 2), height: H - B - Y(c) },
      svg("title", { text: `${start + i * width} … ${start + (i + 1) * width - 1}: ${c} deals` })));
  });
  const every = Math.max(1, Math.ceil(nb / 12));
  for (let i = 0; i <= nb; i += every) s.append(svg("text", { x: X(i), y: H - B + 14, "text-anchor": "middle", text: String(start + i * width) }));
  s.append(svg("text", { x: (L + W) / 2, y: H - 6, "text-anchor": "middle", text: "score change in a deal" }));
  s.append(svg("text", { x: L - 6, y: T + 10, "text-anchor": "end", text: String(cmax) }));
  s.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
  if (start <= 0 && 0 <= start + nb * width) {
    const x0 = X((0 - start) / width);
    s.append(svg("line", { x1: x0, x2: x0, y1: T, y2: H - B, stroke: "#c0262d", "stroke-dasharray": "4 3" }));
  }
  wrap.append(s);
  wrap.append(el("p", { class: "small muted", id: "score-summary" }, scoreSummary(pairs)));
  return wrap;
}

// The line under the histogram: "101 deals · mean 0.0 · median 5 · min -120 · max 60". The
// mean as fmt writes it: toFixed wrote a mean of -0.05 to 0 as "-0.0", where the bot's
// row on the same page says "+0.0".
function scoreSummary(pairs) {
  let total = 0, sum = 0;
  for (const [v, n] of pairs) { total += n; sum += v * n; }
  const lo = pairs[0][0], hi = pairs[pairs.length - 1][0];
  return `${total} deals · mean ${fmt(sum / total, 1)} · median ${median(pairs, total)} · min ${lo} · max ${hi}`;
}

// Incidents with a link to the deal of the replay where each happened. Deals are numbered
// from 1, as the replay page and `arena replay` number them (#deal= is the 0-based index).
function incidentTable(id, incidents) {
  const known = (x) => x !== null && x !== undefined;
  return el("table", { class: "data", id },
    el("thead", {}, el("tr", {}, el("th", { class: "name" }, "match"), el("th", {}, "deal"), el("th", { class: "name" }, "kind"), el("th", { class: "name" }, "detail"))),
    el("tbody", {}, incidents.map((s) => el("tr", {},
      el("td", { class: "name" }, s.held_back ? s.match_id : replayLink(s.match_id, s.match_id, known(s.deal) ? `#deal=${s.deal}&step=0` : "")),
      el("td", { class: "deal" }, known(s.deal) ? String(s.deal + 1) : "–"), el("td", { class: "name" }, s.kind), el("td", { class: "name" }, s.detail)))));
}

function render(d) {
  const main = document.getElementById("main");
  const r = d.row || {};
  const facts = el("table", { class: "data", id: "bot-row" },
    el("thead", {}, el("tr", {}, ["rank", "μ", "σ", "μ−3σ", "matches", "places", "score per deal", "bids won", "contracts made", "strikes", "median decision"].map((h) => el("th", {}, h)))),
    el("tbody", {}, el("tr", {},
      el("td", {}, fmt(r.rank, 0)), el("td", {}, fmt(r.mu, 2)), el("td", {}, fmt(r.sigma, 2)), el("td", {}, fmt(r.conservative, 2)),
      el("td", {}, fmt(r.matches, 0)), el("td", {}, (r.places || []).join(" / ")),
      el("td", {}, meanPerDealText(r)),
      el("td", {}, fmt(r.bidding_wins, 0)), el("td", {}, madeText(r)),
      el("td", {}, fmt(r.strikes, 0)), el("td", {}, medianMsText(r)))));
  // A match's record lists a seat's first 20 disconnects (and answers to no pending
  // request) one by one and counts them all: the row counts them all.
  const unlisted = (n, what) => n ? el("p", { class: "small muted", id: `${what}-not-listed` },
    `and ${n} more ${what === "strikes" ? "disconnects" : "answers to no pending request or decisions the bot failed"}, counted in the leaderboard but not listed: a match's record lists the first 20 of a seat one by one.`) : [];
  const strikes = [d.strikes.length ? incidentList(d, "strikes", "strikes", "strikes") : el("p", { class: "muted", id: "strikes" }, "No strikes."), unlisted(d.strikes_not_listed, "strikes")];
  // incidents that are no strike (an answer to no pending request, a decision the bot
  // failed): apart, if any
  const others = d.other_incidents || [];
  const otherPart = others.length || d.other_incidents_not_listed ? [
    el("h2", {}, "Other incidents (not strikes)"),
    el("section", { class: "panel" },
      el("p", { class: "small muted" }, "Answers to no pending request (a late answer, say, whose request had already timed out), and decisions the bot failed (bot_error: it raised, or answered no action, and its client sent a fallback): no strike."),
      others.length ? incidentList(d, "other_incidents", "other-incidents", "incidents") : incidentTable("other-incidents", others), unlisted(d.other_incidents_not_listed, "other")),
  ] : [];
  main.replaceChildren(
    el("h1", {}, `${d.bot} `, el("span", { class: "muted small" }, `in ${d.tournament.name}`)),
    otherTournaments(d),
    el("section", { class: "panel" }, facts),
    el("h2", {}, "Score per deal"),
    el("section", { class: "panel" }, histogram(d.deal_score_counts),
      d.deal_scores_held_back ? el("p", { class: "small muted", id: "held-back-deals" },
        `${d.deal_scores_held_back} deals of matches dealt the same cards as matches still to be played are not counted yet.`) : []),
    el("h2", {}, "Strikes"),
    el("section", { class: "panel" }, ...strikes),
    ...otherPart,
    el("h2", {}, d.vs ? `Matches against ${d.vs} (${d.matches_total})` : `Matches (${d.matches_total})`),
    el("section", { class: "panel", id: "bot-matches" }, opponentPicker(d), matchList(d)));
}

// The database's other tournaments the bot plays in (a club's other weeks, its other
// league), the latest first, each linking to the bot's page there.
function otherTournaments(d) {
  const others = (d.plays_in || []).filter((t) => t.id !== d.tournament.id);
  // "" rather than null: main.replaceChildren (unlike el) writes a null as the text "null",
  // which stood under the name of every bot playing in one tournament only
  if (!others.length) return "";
  const when = (t) => String(t.created_at || "").slice(0, 16).replace("T", " ");
  return el("p", { class: "small muted", id: "bot-tournaments" }, "Also plays in: ",
    others.flatMap((t, i) => [i ? " · " : "",
      el("a", { href: withTournament("/bot/" + encodeURIComponent(d.bot), t.id), title: t.id }, `${t.name} (${when(t)})`)]));
}

// Which matches the list shows: all of the bot's, or those against one opponent (the
// tournament's other bots: with 30 of them, a meeting of two was a search through pages).
function opponentPicker(d) {
  const others = (d.tournament.bots || []).filter((b) => b !== d.bot);
  // (an opponent who left the tournament, linked from the head to head, is no longer
  // seated: the selector said "every opponent" over the matches against him)
  if (d.vs && !others.includes(d.vs)) others.push(d.vs);
  if (!others.length) return "";
  const pick = el("select", { id: "vs-select", onchange: (e) => {
    const q = new URLSearchParams(location.search);
    if (e.target.value) q.set("vs", e.target.value); else q.delete("vs");
    location.search = q.toString();
  } }, el("option", { value: "" }, "every opponent"),
  others.map((b) => el("option", { value: b, selected: b === d.vs }, b)));
  return el("p", { class: "small" }, el("label", { for: "vs-select" }, "against: "), pick);
}

// The bot's strikes (key "strikes") or its other incidents ("other_incidents"), newest
// first, paged as its matches are: the newest come with the bot's page, the older ones a page
// at a time (/api/bots/<name>/<key>?before=...), added under them at each click (a bot that
// timed out, or failed, in every deal listed thousands at once). `id`: the table's;
// `what`: the button's words ("older strikes").
function incidentList(d, key, id, what) {
  const table = incidentTable(id, d[key]);
  return [table, olderPages(table, what, d[`${key}_total`], d[`${key}_next_before`], async (before) => {
    const page = await api(`/api/bots/${encodeURIComponent(d.bot)}/${key}?tournament=` +
      `${encodeURIComponent(d.tournament.id)}&limit=${MATCH_PAGE}&before=${before}`);
    return [incidentTable(id, page[key]), page[`${key}_next_before`]];
  })];
}

// The bot's matches, newest first: the first page comes with the bot's page, the older ones
// a page at a time (/api/matches?bot=...&before=...), added under them at each click.
function matchList(d) {
  const table = matchesTable(d.matches, d.bot);
  return [table, olderPages(table, "matches", d.matches_total, d.next_before, async (before) => {
    const page = await api(`/api/matches?tournament=${encodeURIComponent(d.tournament.id)}` +
      `&bot=${encodeURIComponent(d.bot)}&limit=${MATCH_PAGE}&before=${before}` +
      (d.vs ? `&vs=${encodeURIComponent(d.vs)}` : ""));
    return [matchesTable(page.matches, d.bot), page.next_before];
  })];
}

// Under a list's first page (`table`), the count shown ("newest first: 50 of 12000 shown")
// and an "older <what>" button that adds the next page's rows at each click: `load(before)`
// gives the next page's table and the `before` of the one after it (null: none).
function olderPages(table, what, total, next, load) {
  const tbody = table.querySelector("tbody");
  const count = el("span", { class: "small muted", id: `${what}-shown` });
  const more = el("button", { type: "button", id: `older-${what}` }, `older ${what} ▾`);
  let before = next;
  const update = () => {
    count.textContent = `newest first: ${tbody.children.length} of ${total} shown`;
    more.hidden = before === null || before === undefined;
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      const [older, after] = await load(before);
      tbody.append(...older.querySelector("tbody").children);
      before = after;
      update();
    } catch (err) {
      count.textContent = `cannot read the older ${what}: ` + err.message;
    } finally {
      more.disabled = false;
    }
  });
  update();
  return el("p", {}, more, " ", count);
}

async function main() {
  header();
  try {
    const d = await api(withTournament(`/api/bots/${encodeURIComponent(botName)}` + (VS ? `?vs=${encodeURIComponent(VS)}` : "")));
    document.title = `${d.bot} · Thousand Arena`;
    showTournament(d.tournament.id);  // (its replay links: of this tournament, once another starts)
    render(d);
    setStatus(`tournament ${tournamentState(d.tournament)}`, d.tournament.running);
    document.body.dataset.ready = "1";
  } catch (err) {
    showError("main", err);
    document.body.dataset.ready = "error";
  }
}
main();

// The leaderboard page: table, rating history plot, head-to-head, latest matches.
// Polls /api/leaderboard every few seconds and redraws when a new match has been stored.
"use strict";

const POLL_MS = 3000;
let lastVersion = null;
// ?season=club-w: a season's standings (`arena leaderboard --season`), its tournaments
// linked; a bot's link opens its page of the latest of them it played in (botWeeks).
const SEASON = qs("season");
let botWeeks = null;

function boardBotLink(name) {
  if (!botWeeks || !botWeeks[name]) return botLink(name);
  return el("a", { href: withTournament("/bot/" + encodeURIComponent(name), botWeeks[name]), class: "bot-link" }, name);
}

const COLUMNS = [
  ["rank", "#", (r) => r.rank],
  ["bot", "bot", (r) => boardBotLink(r.bot), "name"],
  ["mu", "μ", (r) => fmt(r.mu, 2)],
  ["sigma", "σ", (r) => fmt(r.sigma, 2)],
  ["conservative", "μ−3σ", (r) => el("b", {}, fmt(r.conservative, 2))],
  ["matches", "matches", (r) => fmt(r.matches, 0)],
  ["places", "1st/2nd/3rd", (r) => (r.places || []).join(" / ")],
  ["mean_per_deal", "score per deal ± 95% CI", meanPerDealText],
  ["bidding_wins", "bids won", (r) => fmt(r.bidding_wins, 0)],
  ["contracts_made", "contracts made", madeText],
  ["strikes", "strikes", strikesCell],
  ["median_ms", "median decision", medianMsText],
];

// Strikes as `arena leaderboard` counts them; the cell's tooltip splits them and names the
// incidents that are no strike (an answer to no pending request, a decision the bot failed:
// it raised, and its client sent a fallback), those failed decisions apart.
function strikesCell(r) {
  const g = r.strike_groups || {};
  const failed = r.bot_errors ? `, of them ${r.bot_errors} decision(s) the bot failed (bot_error)` : "";
  const other = r.other_incidents ? ` · ${r.other_incidents} other incident(s), no strike${failed}` : "";
  return el("span", { title: `timeouts ${g.timeouts || 0} · illegal or malformed ${g.illegal || 0} · disconnects ${g.disconnects || 0} · forfeits ${g.forfeits || 0}${other}` }, fmt(r.strikes, 0));
}

function boardTable(data) {
  const places = (data.seats || 3) === 4 ? "1st/2nd/3rd/4th" : "1st/2nd/3rd";
  const t = el("table", { class: "data", id: "leaderboard" });
  t.append(el("thead", {}, el("tr", {}, COLUMNS.map(([k, label, , cls]) => el("th", { class: cls || null, dataset: { col: k } }, k === "places" ? places : label)))));
  const tb = el("tbody");
  for (const r of data.rows) {
    tb.append(el("tr", { dataset: { bot: r.bot } }, COLUMNS.map(([k, , f, cls]) => el("td", { class: cls || null, dataset: { col: k } }, f(r)))));
  }
  t.append(tb);
  return t;
}

// Rating history: μ per bot after each of its matches, with a μ ± σ band. x = schedule index.
function ratingPlot(data) {
  const W = 900, H = 320, L = 48, R = 12, T = 12, B = 34;
  const bots = data.rows.map((r) => r.bot);
  const series = bots.map((b) => data.history[b] || []);
  const wrap = el("div", { id: "rating-plot" });
  if (!series.some((ser) => ser.length)) { wrap.append(el("p", { class: "muted" }, "No rated matches yet.")); return wrap; }
  // by a loop, not Math.max(...points): one argument per point overflowed the call stack
  // past ~120,000 points (three bots, 40,000 matches)
  let xmax = 1, ymin = 25 - 25 / 3, ymax = 25 + 25 / 3;
  for (const ser of series) {
    for (const p of ser) {
      xmax = Math.max(xmax, p.index + 1);
      ymin = Math.min(ymin, p.mu - p.sigma); ymax = Math.max(ymax, p.mu + p.sigma);
    }
  }
  const pad = (ymax - ymin) * 0.05; ymin -= pad; ymax += pad;
  const X = (i) => L + (W - L - R) * (i / xmax), Y = (y) => T + (H - T - B) * (1 - (y - ymin) / (ymax - ymin));
  const s = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "plot", role: "img", "aria-label": "rating history" });
  const step = niceStep((ymax - ymin) / 6);
  for (let y = Math.ceil(ymin / step) * step; y <= ymax; y += step) {
    s.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: Y(y), y2: Y(y) }));
    s.append(svg("text", { x: L - 6, y: Y(y) + 4, "text-anchor": "end", text: String(Math.round(y * 10) / 10) }));
  }
  const xstep = Math.max(1, niceStep(xmax / 8));  // whole matches (it showed 0.5, 1.5)
  for (let x = 0; x <= xmax; x += xstep) s.append(svg("text", { class: "xtick", x: X(x), y: H - B + 16, "text-anchor": "middle", text: String(x) }));
  s.append(svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle", text: "matches played (schedule order)" }));
  s.append(svg("line", { class: "axis", x1: L, x2: L, y1: T, y2: H - B }));
  s.append(svg("line", { class: "axis", x1: L, x2: W - R, y1: H - B, y2: H - B }));
  series.forEach((ser, i) => {
    if (!ser.length) return;
    // start every line at the prior (μ 25, σ 25/3) before the first match
    const first = { index: -1, mu: 25, sigma: 25 / 3 };
    const all = [first, ...ser];
    const up = all.map((p) => `${X(p.index + 1).toFixed(1)},${Y(p.mu + p.sigma).toFixed(1)}`);
    const down = all.slice().reverse().map((p) => `${X(p.index + 1).toFixed(1)},${Y(p.mu - p.sigma).toFixed(1)}`);
    s.append(svg("polygon", { class: "band", points: up.concat(down).join(" "), fill: colorOf(i), "fill-opacity": "0.13", stroke: "none", "data-bot": bots[i] }));
    // hovering a line names its bot (past a dozen bots the colours alone do not tell them
    // apart), as the lines of `arena leaderboard --format html` do
    const end = ser[ser.length - 1];
    s.append(svg("polyline", { class: "mu", points: all.map((p) => `${X(p.index + 1).toFixed(1)},${Y(p.mu).toFixed(1)}`).join(" "), fill: "none", stroke: colorOf(i), "stroke-width": "2", "data-bot": bots[i] },
      svg("title", { text: `${bots[i]}: μ ${fmt(end.mu, 2)} σ ${fmt(end.sigma, 2)}` })));
  });
  wrap.append(s);
  const legend = el("div", { class: "legend small" });
  bots.forEach((b, i) => legend.append(el("span", {}, el("span", { class: "swatch", style: `background:${colorOf(i)}` }), b)));
  legend.append(el("span", { class: "muted" }, "line: μ · band: μ ± σ"));
  wrap.append(legend);
  return wrap;
}

function niceStep(raw) {
  if (raw <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

function headToHead(data) {
  const h = data.head_to_head, bots = h.bots;
  const t = el("table", { class: "data h2h", id: "head-to-head" });
  t.append(el("thead", {}, el("tr", {}, el("th", { class: "name" }, "row placed ahead of column"), bots.map((b) => el("th", {}, el("span", { class: "wrap-name" }, b))))));
  const tb = el("tbody");
  for (const a of bots) {
    const tr = el("tr", { dataset: { bot: a } }, el("td", { class: "name" }, boardBotLink(a)));
    for (const b of bots) {
      if (a === b) { tr.append(el("td", { class: "self" }, "")); continue; }
      const c = (h.cells[a] || {})[b];
      if (!c || !c.played) { tr.append(el("td", { class: "muted" }, "–")); continue; }
      // the share counts a tie as half: the ties are said, or "0/24 (50%)" of two bots
      // that shared every place (two forfeiters of four) read as a contradiction
      const pct = Math.round((100 * (c.ahead + c.tied / 2)) / c.played);
      // a tournament's cell links the matches of the two (row's page, against column);
      // a season's spans tournaments, which no one page lists
      const count = `${c.ahead}/${c.played}`;
      const link = botWeeks ? count : el("a", { href: withTournament(`/bot/${encodeURIComponent(a)}?vs=${encodeURIComponent(b)}`, data.tournament.id), class: "h2h-link" }, count);
      tr.append(el("td", { title: `${a} ahead of ${b} in ${c.ahead} of ${c.played} matches (${c.tied} tied; the share counts a tie as half)` },
        link, c.tied ? `, ${c.tied} tied ` : " ", el("span", { class: "muted small" }, `(${pct}%)`)));
    }
    tb.append(tr);
  }
  t.append(tb);
  return t;
}

// which rules ran: the description (name, options that differ from its preset, deal cap)
// where the server gives one, else the name alone
function rulesetText(t) {
  if (t.ruleset_description) return t.ruleset_description;
  return typeof t.ruleset === "object" && t.ruleset ? t.ruleset.name : t.ruleset || "";
}

// A season's tournaments, in the order rated, each linked to its own leaderboard.
function weeksTable(data) {
  const t = el("table", { class: "data", id: "season-weeks" });
  t.append(el("thead", {}, el("tr", {}, el("th", { class: "name" }, "tournament"), el("th", {}, "matches"),
    el("th", { class: "name" }, "deals"), el("th", { class: "name" }, "state"), el("th", { class: "name" }, "changed since an earlier one"))));
  const tb = el("tbody");
  for (const w of data.weeks) {
    tb.append(el("tr", { dataset: { tournament: w.id } },
      el("td", { class: "name" }, el("a", { href: withTournament("/", w.id), class: "tournament-link" }, w.name), " ", el("span", { class: "muted small" }, w.id)),
      el("td", {}, playedOf(w, "/")),
      el("td", { class: "name" }, `${w.deals === "independent" ? "independent" : "duplicate"}`),
      el("td", { class: "name" }, tournamentState(w)),
      el("td", { class: "name" }, (w.changes || []).join("; "))));
  }
  t.append(tb);
  return t;
}

function renderSeason(data) {
  botWeeks = data.bot_tournament || {};
  const main = document.getElementById("main");
  main.replaceChildren(el("h1", {}, `Season · ${data.season}`),
    el("p", { class: "muted", id: "progress" }, data.title),
    el("section", { class: "panel" }, boardTable(data),
      el("p", { class: "small muted" }, `${data.source}, rated together in that order (TrueSkill from the prior; a bot is told apart by its name). Ranked by μ−3σ; the columns as on a tournament's leaderboard.`),
      data.notes.length ? el("ul", { class: "small", id: "season-notes" }, data.notes.map((n) => el("li", {}, n))) : null),
    el("h2", {}, "Tournaments"),
    el("section", { class: "panel" }, weeksTable(data)),
    el("h2", {}, "Rating history"),
    el("section", { class: "panel" }, ratingPlot(data)),
    el("h2", {}, "Head to head"),
    el("section", { class: "panel" }, headToHead(data)));
}

function render(data) {
  if (data.weeks) { renderSeason(data); return; }
  const t = data.tournament;
  const main = document.getElementById("main");
  const title = el("h1", {}, `Leaderboard · ${t.name}`);
  const sub = el("p", { class: "muted", id: "progress" },
    playedMatches(t) + (t.ruleset ? ` · ruleset ${rulesetText(t)}` : "") + (t.deals_note ? ` · ${t.deals_note}` : "") + ` · ${t.state === "stopped" ? "stopped before its end (not finished)" : tournamentState(t)}`);
  let picker = null;
  if (data.tournaments.length > 1) {
    // two tournaments of one name (another seed, a bot changed) are told apart by id and
    // date, and by their rules when those differ (one option edited between two runs, or
    // another deal cap: the description ends with it)
    // (and by their deals: one run of a config duplicate, one independent). From `deals`,
    // not `deals_note`, which is null for an `arena serve --db` session too: beside a
    // tournament of independent deals the session read "duplicate deals", and its matches
    // are each dealt from a seed of their own.
    const dealt = (x) => `${x.deals === "independent" ? "independent" : "duplicate"} deals`;
    const seen = {}, rules = {}, notes = {};
    for (const x of data.tournaments) {
      seen[x.name] = (seen[x.name] || 0) + 1;
      (rules[x.name] = rules[x.name] || new Set()).add(rulesetText(x));
      (notes[x.name] = notes[x.name] || new Set()).add(dealt(x));
    }
    const label = (x) => (seen[x.name] > 1 ? `${x.name} [${rules[x.name].size > 1 ? rulesetText(x) + ", " : ""}${notes[x.name].size > 1 ? dealt(x) + ", " : ""}${x.id}, ${String(x.created_at || "").slice(0, 16).replace("T", " ")}]` : x.name) + ` (${playedOf(x, "/")})`;
    picker = el("select", { id: "tournament-select", onchange: (e) => { location.search = "?tournament=" + encodeURIComponent(e.target.value); } },
      data.tournaments.map((x) => el("option", { value: x.id, selected: x.id === t.id }, label(x))));
  }
  const recentOf = latestOf(data.recent.length, t);  // (how many there are in all)
  // `arena web --season S`: the club's season, a link from every tournament's page
  const season = data.season ? el("p", {}, el("a", { href: "/?season=" + encodeURIComponent(data.season), id: "season-link" }, `Season ${data.season}: the standings of its tournaments together`)) : "";
  main.replaceChildren(title, sub, picker || "", season,
    el("section", { class: "panel" }, boardTable(data),
      el("p", { class: "small muted" }, "Ranked by μ−3σ (TrueSkill, each match a free-for-all by final place). Score per deal: the mean of the bot's score changes over all its deals, ± 1.96·sd/√n. Bids won: the deals the bot declared. Contracts made: made / played (a concession or a throw-in is a bid won but no contract played). Strikes: timeouts, illegal or malformed answers, disconnects, forfeits (an answer to no pending request, a late one say, is no strike). Median decision: the bot's median decision time, forced moves left out.")),
    el("h2", {}, "Rating history"),
    el("section", { class: "panel" }, ratingPlot(data)),
    el("h2", {}, "Head to head"),
    el("section", { class: "panel" }, headToHead(data)),
    el("h2", {}, "Latest matches"),
    el("section", { class: "panel", id: "recent" }, data.recent.length ? [recentOf ? el("p", { class: "small muted", id: "recent-count" }, recentOf) : null, matchesTable(data.recent)] : el("p", { class: "muted" }, "No match stored yet.")));
}

async function poll() {
  let data;
  try {
    data = await api(SEASON !== null ? "/api/season?season=" + encodeURIComponent(SEASON) : withTournament("/api/leaderboard"));
  } catch (err) {
    if (lastVersion === null) { showError("main", err); document.body.dataset.ready = "error"; }
    setStatus(failureText(err), false);
    setTimeout(poll, POLL_MS * 2);
    return;
  }
  try {
    // (a season: running while one of its tournaments is)
    const t = data.weeks ? { running: data.weeks.some((w) => w.running), completed: data.completed, total_matches: 0, state: data.weeks.some((w) => w.running) ? "running" : data.weeks.every((w) => w.state === "finished") ? "finished" : "stopped" } : data.tournament;
    if (data.version !== lastVersion) {
      render(data);
      // only once drawn: a version that failed to draw shows its error and is drawn again
      // at the next poll (it was marked drawn first, and the page stayed on "Loading…")
      lastVersion = data.version;
      document.body.dataset.version = data.version;
    }
    setStatus(t.running ? `live · ${playedOf(t, "/")} · updated ${new Date().toLocaleTimeString()}` : tournamentState(t) === "finished" ? `finished · ${matchCount(t.completed)}` : tournamentState(t), t.running);
    document.body.dataset.ready = "1";
    if (t.running) setTimeout(poll, POLL_MS);
    else setTimeout(poll, POLL_MS * 5);  // a finished tournament may be followed by another, a stopped one resumed
  } catch (err) {
    showError("main", err);
    setStatus("cannot draw the page: " + err.message, false);
    document.body.dataset.ready = "error";
    setTimeout(poll, POLL_MS * 2);
  }
}

header();
poll();

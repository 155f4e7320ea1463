// Shared helpers of the arena web pages (no framework, no external fetches).
"use strict";

const SVGNS = "http://www.w3.org/2000/svg";

function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(e.dataset, v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function svg(tag, attrs, ...children) {
  const e = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined) continue;
    if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) if (c) e.append(c);
  return e;
}

// The last answer of each API path read lately, with its ETag: the next request of the path
// says If-None-Match, and the server's 304 (nothing changed: no body sent) is answered from
// here. (cache "no-store": the browser keeps no copy of its own, and the 304 reaches this
// code.) The latest ANSWERS_KEPT paths only: the replay reads a path per deal and view.
const answers = new Map(), ANSWERS_KEPT = 8;

async function api(path) {
  const kept = answers.get(path);
  const r = await fetch(path, { cache: "no-store", headers: kept ? { "If-None-Match": kept.etag } : {} });
  if (r.status === 304 && kept) {
    answers.delete(path); answers.set(path, kept);
    return kept.body;
  }
  let body;
  try { body = await r.json(); } catch (e) { body = { error: r.statusText }; }
  if (!r.ok) {
    // the server answered: its status goes with the error (see failureText)
    const err = new Error(body.error || r.statusText);
    err.status = r.status;
    throw err;
  }
  const etag = r.headers.get("ETag");
  answers.delete(path);  // (set again last: a Map iterates in the order keys were set)
  if (etag) answers.set(path, { etag, body });
  while (answers.size > ANSWERS_KEPT) answers.delete(answers.keys().next().value);
  return body;
}

// A failed request in words: what the server said, or, when no answer came (the server is
// stopped, the network down: fetch itself failed), that it could not be reached. The
// leaderboard of an empty database said "cannot reach the server: no tournament in x.sqlite
// yet", of a server that had answered.
function failureText(err) {
  const message = String((err && err.message) || err);
  return err && err.status ? message : "cannot reach the server: " + message;
}

function qs(name) { return new URLSearchParams(location.search).get(name); }

function withTournament(path, t = qs("tournament")) {
  if (!t) return path;
  return path + (path.includes("?") ? "&" : "?") + "tournament=" + encodeURIComponent(t);
}

// The tournament of what the page shows, once its answer has come (a replay's: its match's):
// the links the page draws lead there. They followed the address's ?tournament= alone, and
// without one led to the database's latest tournament: from the replay of last week's match
// a player's name opened his page of this week's tournament (or "no bot ... in tournament"
// for a member who had left), and the header's Leaderboard this week's table. (The API
// calls keep the address's: a leaderboard without one follows the latest tournament.)
let pageTournament = null;
const headerLinks = [];

function linkTo(path) { return withTournament(path, pageTournament || qs("tournament")); }

function showTournament(id) {
  pageTournament = id || null;
  for (const a of headerLinks) a.setAttribute("href", linkTo("/"));
}

function fmt(x, digits = 1) {
  if (x === null || x === undefined || x === "") return "–";
  if (typeof x !== "number") return String(x);
  const s = Number.isInteger(x) && digits === 0 ? String(x) : x.toFixed(digits);
  // (-0.04 is "-0.0" to toFixed: a sign on a figure that shows zero only misleads)
  return /^-0(\.0*)?$/.test(s) ? s.slice(1) : s;
}

// A bot's row as `arena leaderboard` and its files write it (arena/leaderboard/render.py,
// _mean_ci and _made), so that the figures read the same on the screen, in the files and on
// every page: the mean score per deal signed, with its interval when there is one
// ("+54.9 ± 5.2", "+54.9" of a single deal; the pages showed "54.9 ± 5.2" and "54.9 ± –"),
// contracts made with their share ("1/26 (4%)", "0/0" before any: the bot page showed
// "1/26", and "0" for none).
function meanPerDealText(r) {
  if (r.mean_per_deal === null || r.mean_per_deal === undefined) return "–";
  const m = fmt(r.mean_per_deal, 1);
  const signed = m.startsWith("-") ? m : "+" + m;
  return r.ci95 === null || r.ci95 === undefined ? signed : `${signed} ± ${fmt(r.ci95, 1)}`;
}
function madeText(r) {
  const made = `${r.contracts_made || 0}/${r.contracts || 0}`;
  return r.contracts ? `${made} (${fmt(100 * r.contracts_made / r.contracts, 0)}%)` : made;
}
// The median decision time: a decimal below 10 ms ("4.0 ms", "12 ms"), on every page.
function medianMsText(r) {
  return r.median_ms === null || r.median_ms === undefined ? "–" : `${fmt(r.median_ms, r.median_ms < 10 ? 1 : 0)} ms`;
}

function isRed(card) { return card && (card.endsWith("♥") || card.endsWith("♦")); }

// A card face: rank above suit, red for hearts and diamonds. null draws a face-down card.
function cardEl(card, opts = {}) {
  if (!card) return el("span", { class: "card back" + (opts.small ? " small" : ""), title: "hidden card" });
  const rank = card.slice(0, -1), suit = card.slice(-1);
  return el("span", {
    class: "card" + (isRed(card) ? " red" : "") + (opts.small ? " small" : "") + (opts.cls ? " " + opts.cls : ""),
    dataset: { card }, title: card,
  }, el("span", { class: "r", text: rank }), el("span", { class: "s", text: suit }));
}

// An action text with its card coloured: "play K♥ declare".
function actionEl(text) {
  const span = el("span", { class: "action" });
  for (const part of String(text).split(/(\S+[♠♣♦♥])/)) {
    if (/[♠♣♦♥]$/.test(part)) span.append(el("span", { class: "cardtext" + (isRed(part) ? " red" : ""), text: part }));
    else if (part) span.append(part);
  }
  return span;
}

function header(active) {
  headerLinks.length = 0;
  headerLinks.push(el("a", { class: "brand", href: linkTo("/") }, "Thousand Arena"),
    el("a", { href: linkTo("/") }, "Leaderboard"));
  const h = el("header", { class: "top" }, headerLinks, el("span", { class: "status", id: "status" }));
  document.body.prepend(h);
}

function setStatus(text, live) {
  const s = document.getElementById("status");
  if (!s) return;
  s.replaceChildren(el("span", { class: "live-dot" + (live ? " on" : "") }), text);
}

function showError(where, err) {
  const box = document.getElementById(where) || document.body;
  box.replaceChildren(el("p", { class: "error", id: "error" }, String(err.message || err)));
}

// Series colours, the scheme of leaderboard.html (arena/leaderboard/html.py, _color): ten
// fixed colours, then hues a golden angle apart in three lightnesses, so no two bots of a
// plot share a colour (it repeated after ten).
const PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"];
function colorOf(i) {
  if (i < PALETTE.length) return PALETTE[i];
  const k = i - PALETTE.length;
  return hslHex((k * 137.508 + 20) % 360, 0.65, [0.42, 0.3, 0.55][k % 3]);
}
function hslHex(h, s, l) {
  const a = s * Math.min(l, 1 - l);
  const channel = (n) => {
    const k = (n + h / 30) % 12;
    const v = l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1));
    return Math.floor(v * 255 + 0.5).toString(16).padStart(2, "0");
  };
  return "#" + [0, 8, 4].map(channel).join("");
}

// Matches played of those scheduled ("3 of 10"); an `arena serve --db` without --matches
// has no set number (0) until it ends: then the number played alone (it said "6 of 0").
function playedOf(t, sep = " of ") {
  return t.total_matches ? `${t.completed}${sep}${t.total_matches}` : String(t.completed);
}

// "1 match", "2 matches".
function matchCount(n) {
  return `${n} match${n === 1 ? "" : "es"}`;
}

// "3 of 10 matches", "1 match" (an open arena's, with no set number; it said "1 matches").
function playedMatches(t) {
  return t.total_matches ? `${playedOf(t)} matches` : matchCount(t.completed);
}

// Under "Latest matches": "the 25 latest of 312 matches stored; ...", or "" when the list
// holds every stored match. (The page showed 25 without saying there were more.)
function latestOf(shown, t) {
  const all = t.completed || 0;
  return shown < all ? `the ${shown} latest of ${matchCount(all)} stored; each bot's page lists all of its matches` : "";
}

// What a tournament is doing, in words: "running", "finished", or, unfinished with no
// runner at work, "stopped at 2 of 6 matches" (it is not finished: it may be resumed).
function tournamentState(t) {
  const state = t.state || (t.running ? "running" : t.finished_at ? "finished" : "stopped");
  if (state === "stopped") return `stopped at ${playedMatches(t)}`;
  return state;
}

function botLink(name) {
  return el("a", { href: linkTo("/bot/" + encodeURIComponent(name)), class: "bot-link" }, name);
}

function replayLink(matchId, text, hash) {
  return el("a", { href: linkTo("/replay/" + encodeURIComponent(matchId)) + (hash || ""), class: "replay-link" }, text || matchId);
}

// A match held back (its deals are those of matches still to be played: the API answers
// its replay with a 403) is listed by its id alone, with no link to follow.
const HELD_BACK_TITLE = "held back: dealt the same cards as matches still to be played; its replay opens once they are played or the tournament has ended";

function heldBackLabel() {
  return el("span", { class: "muted held-back", title: HELD_BACK_TITLE }, "held back");
}

function matchesTable(matches, highlight) {
  const t = el("table", { class: "data matches" },
    el("thead", {}, el("tr", {},
      el("th", { class: "name" }, "match"), el("th", { class: "name" }, "seats (place, score)"),
      el("th", {}, "deals"), el("th", { class: "name" }, "status"), el("th", {}, ""))));
  const tb = el("tbody");
  for (const m of matches) {
    const seats = el("td", { class: "name" });
    (m.players || []).forEach((p, i) => {
      const place = m.places ? m.places[i] : null, score = m.scores ? m.scores[i] : null;
      const txt = `${p}${place ? " #" + place : ""}${score !== null && score !== undefined ? " (" + score + ")" : ""}`;
      seats.append(p === highlight ? el("b", {}, txt) : txt, i < m.players.length - 1 ? ", " : "");
    });
    tb.append(el("tr", { dataset: { match: m.match_id } },
      el("td", { class: "name" }, m.held_back ? m.match_id : replayLink(m.match_id)), seats,
      el("td", {}, fmt(m.deals, 0)), el("td", { class: "name" }, m.status || ""),
      el("td", {}, m.held_back ? heldBackLabel() : m.has_record === false ? "" : replayLink(m.match_id, "replay ▸"))));
  }
  t.append(tb);
  return t;
}

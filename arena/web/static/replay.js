// The replay viewer: /replay/<match_id>#deal=3&step=17&seat=1
// Everything drawn comes from /api/matches/<id>/deals/<k>[?seat=s]: face up, or exactly what
// engine.observe() gave that seat (the server never sends the other hands in a seat view).
// A seat view draws nothing that seat had not seen at the current step: the action log stops
// there, the deal selector names the outcome of finished deals only, and the match's result
// shows at its last step. (The response holds every step of the deal, to step through it: a
// display filter for a reader of a finished match, not a secret; see docs/web.md.)
"use strict";

const matchId = decodeURIComponent(location.pathname.split("/").filter(Boolean)[1] || "");
const state = { summary: null, deal: 0, step: 0, seat: null, data: null, cache: new Map() };

function parseHash() {
  const h = new URLSearchParams(location.hash.slice(1));
  // Only whole numbers from 0 up: a hand-edited link (#deal=1.5, #seat=-1) is ignored.
  const num = (k) => (h.has(k) && /^\d{1,6}$/.test(h.get(k)) ? +h.get(k) : null);
  return { deal: num("deal"), step: num("step"), seat: num("seat") };
}

// The position goes into the address (history.replaceState) at most HASH_BURST times at
// once, then once every HASH_EVERY_MS, the latest position always last: a browser limits
// how often a page may change its address (Chromium: 200 times in 10 s, then it ignores the
// calls, "Throttling navigation"; Safari: 100 in 30 s, then it throws), and a held → key
// steps 30 times a second. The address then kept a position left seconds before, which a
// reload, a bookmark or the address bar's copy restored. The link under the table is
// always the current position. (performance.now: the wall clock set back an hour held
// the address for an hour.)
const HASH_BURST = 20, HASH_EVERY_MS = 400;
let hashTokens = HASH_BURST, hashRefilled = performance.now(), hashTimer = null;

// `now`: written at once whatever the limit (the page is being left: see flushHash).
function writeHash(now = false) {
  let h = `#deal=${state.deal}&step=${state.step}`;
  if (state.seat !== null) h += `&seat=${state.seat}`;
  const url = location.pathname + location.search + h;
  const link = document.getElementById("share-link");
  if (link) { link.href = url; link.textContent = link.href; }
  if (location.hash === h) return;
  const t = performance.now();
  hashTokens = Math.min(HASH_BURST, hashTokens + (t - hashRefilled) / HASH_EVERY_MS);
  hashRefilled = t;
  if (hashTokens < 1 && !now) {
    // (the timer writes the position of its time: the latest)
    if (hashTimer === null) hashTimer = setTimeout(() => { hashTimer = null; writeHash(); }, (1 - hashTokens) * HASH_EVERY_MS);
    return;
  }
  hashTokens -= 1;
  history.replaceState(null, "", url);
}

// The page left (Back, a link) while a position waits for its write: written now, one
// change more, or Forward opened a position left up to HASH_EVERY_MS before. (A reload
// reads the address before the page hears of it: it opens the position written last.)
function flushHash() {
  if (hashTimer === null) return;
  clearTimeout(hashTimer);
  hashTimer = null;
  writeHash(true);
}
addEventListener("pagehide", flushHash);

async function loadDeal(k, seat) {
  const key = `${k}:${seat}`;
  if (!state.cache.has(key)) {
    let path = `/api/matches/${encodeURIComponent(matchId)}/deals/${k}`;
    if (seat !== null) path += `?seat=${seat}`;
    state.cache.set(key, api(path));
  }
  return state.cache.get(key);
}

async function go(deal, step, seat) {
  const nDeals = state.summary.deals.length;
  deal = Math.max(0, Math.min(nDeals - 1, deal));
  if (seat !== undefined) {
    // A seat the match does not have (#seat=7) shows the table face up.
    const seats = (state.summary.players || []).length;
    state.seat = seat !== null && seat < seats ? seat : null;
  }
  const data = await loadDeal(deal, state.seat);
  state.deal = deal;
  state.data = data;
  const last = data.steps.length - 1;
  state.step = step === "end" ? last : Math.max(0, Math.min(last, step));
  render();
  writeHash();
  // fetch the neighbours in advance so stepping across deals is instant
  if (deal + 1 < nDeals) loadDeal(deal + 1, state.seat).catch(() => {});
}

// --- navigation ---------------------------------------------------------------------------

function nextAction() {
  if (state.step < state.data.steps.length - 1) return go(state.deal, state.step + 1);
  if (state.deal < state.summary.deals.length - 1) return go(state.deal + 1, 0);
}
function prevAction() {
  if (state.step > 0) return go(state.deal, state.step - 1);
  if (state.deal > 0) return go(state.deal - 1, "end");
}
// Trick boundaries: the deal's start and every step that completes a trick.
function trickBounds() {
  const steps = state.data.steps, out = [0];
  for (let i = 1; i < steps.length; i++) if (steps[i].tricks_done !== steps[i - 1].tricks_done) out.push(i);
  return out;
}
function nextTrick() {
  const b = trickBounds().find((i) => i > state.step);
  return b !== undefined ? go(state.deal, b) : nextDeal();
}
function prevTrick() {
  const b = trickBounds().filter((i) => i < state.step).pop();
  if (b !== undefined) return go(state.deal, b);
  if (state.deal > 0) return go(state.deal - 1, "end");
}
function nextDeal() { if (state.deal < state.summary.deals.length - 1) return go(state.deal + 1, 0); return go(state.deal, "end"); }
function prevDeal() { if (state.step > 0) return go(state.deal, 0); if (state.deal > 0) return go(state.deal - 1, 0); }

// --- drawing ------------------------------------------------------------------------------

function seatName(s) { return state.summary.players[s]; }

// An action as people read it: a give names its receiver, as `arena replay` does ("give 9♠
// to bob"; the record's "give 9♠ to 1" names a seat number, and with four players the
// dealer's seat is skipped). A card the seat did not see stays "??".
function actionText(text) {
  return String(text).replace(/^give (\S+) to (\d+)$/, (all, card, to) =>
    seatName(+to) === undefined ? all : `give ${card} to ${seatName(+to)}`);
}

// The moves the referee played for a seat (the record's "by": "fallback"): the server sends
// why in each step's action.fallback (arena.render.fallback_reasons: the strike that caused
// it, or the seat's forfeit; "" when the record does not say) and in words in
// action.fallback_why; both null for the bot's own move and for a forced one (a single
// legal action), which is not marked.
function isReferee(a) { return !!a && a.fallback !== null && a.fallback !== undefined; }
function refereeWhy(a) { return (a && a.fallback_why) || ""; }
function refereeLabel(a) { const why = refereeWhy(a); return why ? `referee: ${why}` : "referee"; }
function refereeTitle(a) {
  const why = refereeWhy(a);
  return `played by the referee for ${seatName(a.seat)} (fallback${why ? ": " + why : ""})`;
}
function refereeBadge(a) {
  return el("span", { class: "referee-badge", title: refereeTitle(a) }, refereeLabel(a));
}

// A decision the bot failed (it raised, or answered no action) whose fallback its client
// sent as its answer: the record's "failed": true on a "by": "bot" move (the server's
// action.failed). Not the referee's move and no strike (a bot_error incident), yet not the
// bot's choice either: marked apart, in `arena replay`'s words (CLIENT_NOTE).
const CLIENT_NOTE = "fallback of the bot's client: its decision failed";
function isClientFallback(a) { return !!a && a.failed === true && !isReferee(a); }
function clientTitle(a) { return `played by ${seatName(a.seat)}'s client (${CLIENT_NOTE}; a bot_error, no strike)`; }
function clientBadge(a) {
  return el("span", { class: "client-fallback-badge", title: clientTitle(a) }, "fallback: decision failed");
}
// Whichever fallback a move is (the referee's, its client's), its mark; null for the bot's
// own move and a forced one.
function fallbackBadge(a) { return isReferee(a) ? refereeBadge(a) : isClientFallback(a) ? clientBadge(a) : null; }
function fallbackTitle(a) { return isReferee(a) ? refereeTitle(a) : clientTitle(a); }
function fallbackClass(a) { return isReferee(a) ? "referee" : isClientFallback(a) ? "client-fallback" : ""; }

// The cards played as a fallback for a seat up to the current step (the referee's, or its
// client's after a failed decision): card -> its action.
function refereeCards() {
  const out = new Map();
  state.data.steps.forEach((st, i) => {
    const a = st.action;
    if (i > state.step || !(isReferee(a) || isClientFallback(a))) return;
    const m = /^play (\S+)/.exec(a.text);
    if (m) out.set(m[1], a);
  });
  return out;
}

// A card of a trick: a card played as a fallback is outlined (the referee's orange, its
// client's purple), whose and why in the title.
function trickCard(card, referee, opts = {}) {
  const a = referee.get(card);
  const c = cardEl(card, a ? { ...opts, cls: fallbackClass(a) } : opts);
  if (a) c.title = `${card}: ${fallbackTitle(a)}`;
  return c;
}

// What the dealer of four, who sits the deal out, scores of the talon, in the words of
// `arena replay` (arena.render.sitter_talon): its worth only where this view shows the
// talon (the server sends talon_score with the talon it shows, never without it), "three
// nines" named (100, no card points), and nothing of it while he sits on the barrel (as the
// deal began: the last step's barrel is the one after it).
function sitterTalon(v, s) {
  let worth = "";
  if (v.talon && v.talon_score !== null && v.talon_score !== undefined) {
    worth = String(v.talon_score);
    if (v.talon.every((c) => c && c.startsWith("9"))) worth += ", three nines";
  }
  const start = state.data.steps[0].view;
  if (!(start.barrel && start.barrel[s] > 0)) return worth ? `scores the talon: ${worth}` : "scores the talon";
  return worth ? `on the barrel: the talon (${worth}) is not scored` : "on the barrel: scores nothing of the talon";
}

function seatBox(v, s, step) {
  const n = state.summary.seats;
  const active = v.active_seats.includes(s);
  const hand = v.hands[s];
  const box = el("div", {
    class: `seat seat-${s}` + (v.to_act === s ? " to-act" : ""), id: `seat-${s}`, dataset: { seat: String(s) },
  });
  const badges = el("span", { class: "badges" });
  if (v.dealer === s) badges.append(el("span", { title: "dealer" }, "dealer"));
  if (v.declarer === s) badges.append(el("span", { class: "decl", title: "declarer" }, "declarer"));
  if (v.barrel && v.barrel[s] > 0) badges.append(el("span", { title: "deals left on the barrel" }, `barrel ${v.barrel[s]}`));
  if (state.seat === s) badges.append(el("span", {}, "viewing"));
  if (forfeitKnown(s)) badges.append(el("span", { class: "forfeit", title: "forfeited the match" }, "forfeited"));
  box.append(el("div", { class: "who" }, el("span", { class: "name", title: `${s}: ${seatName(s)}` }, `${s}: ${seatName(s)}`), badges));
  const handEl = el("div", { class: "hand", id: `hand-${s}` });
  const sitsOut = !active && n === 4;
  if (sitsOut) handEl.append(el("span", { class: "small sits-out" }, `sits out this deal (${sitterTalon(v, s)})`));
  else if (hand) for (const c of hand) handEl.append(cardEl(c));
  else for (let i = 0; i < (v.hand_sizes ? v.hand_sizes[s] : 0); i++) handEl.append(cardEl(null, { small: true }));
  box.append(handEl);
  const res = v.result;
  box.append(el("div", { class: "nums" },
    // the sitter takes no trick: its score change at the deal's end is the talon's score
    // (none of it on the barrel, where a barrel event may change it too: sitterTalon)
    el("span", { class: "take", dataset: { seat: String(s) } }, sitsOut ? "sits out" : `take ${v.takes[s]}`), " · ",
    el("span", { class: "score", id: `score-${s}`, dataset: { seat: String(s) } }, `score ${v.scores[s]}`),
    res && res.deltas ? el("span", { class: "delta" }, ` (${res.deltas[s] >= 0 ? "+" : ""}${res.deltas[s]})`) : null));
  return box;
}

function centerBox(v) {
  const c = el("div", { class: "center" });
  const phase = { BIDDING: "bidding", PASSING: "passing cards", CONTRACT: "naming the contract", PLAYING: "play", DEAL_OVER: "deal over", GAME_OVER: "match over" }[v.phase] || v.phase;
  const info = el("div", { class: "info", id: "table-info" });
  info.append(el("div", {}, `deal ${state.data.number + 1} · `, el("b", { id: "phase" }, phase)));
  const bid = v.bid !== null ? `bid ${v.bid}` : "";
  const contract = v.contract !== null ? ` · contract ${v.contract}` : "";
  info.append(el("div", { id: "contract" }, bid + contract + (v.declarer !== null ? ` · declarer ${seatName(v.declarer)}` : "")));
  // why he holds the talon when nobody bid it, as `arena replay` says it (the server's words)
  if (v.taken) info.append(el("div", { class: "small", id: "talon-why" }, v.taken));
  info.append(el("div", { id: "trump" }, "trump: ", v.trump ? el("span", { class: "cardtext" + (isRed("x" + v.trump) ? " red" : ""), style: "font-size:1.4em" }, v.trump) : "none"));
  c.append(info);
  // the trick in progress (or, at a trick's end, the trick just won)
  const trickEl = el("div", { class: "trick", id: "trick" });
  let shown = v.trick, caption = "";
  if (!shown.length && v.tricks.length && state.data.steps[state.step].action &&
      state.data.steps[state.step].action.text.startsWith("play")) {
    const t = v.tricks[v.tricks.length - 1];
    shown = t.cards; caption = `trick ${v.tricks.length} won by ${seatName(t.winner)}`;
  }
  const referee = refereeCards();
  for (const p of shown) {
    const a = referee.get(p.card);
    // the mark under a card played as a fallback: short, whose and why in the title
    const mark = !a ? null : isReferee(a)
      ? el("span", { class: "referee-mark", title: refereeTitle(a) }, "referee")
      : el("span", { class: "client-fallback-mark", title: clientTitle(a) }, "failed");
    trickEl.append(el("div", { class: "played-by" + (a ? " " + fallbackClass(a) : ""), title: seatName(p.seat) },
      trickCard(p.card, referee), el("span", { class: "by" }, seatName(p.seat)), mark));
  }
  c.append(trickEl);
  if (caption) c.append(el("div", { class: "small", id: "trick-caption" }, caption));
  // talon
  const taken = v.declarer !== null && v.phase !== "BIDDING";
  const talon = el("div", { id: "talon" }, el("span", { class: "small" }, taken ? `talon (taken by ${seatName(v.declarer)}) ` : "talon "));
  if (v.talon) for (const card of v.talon) talon.append(cardEl(card, { small: true }));
  else if (v.phase === "BIDDING" || v.declarer === null) for (let i = 0; i < 3; i++) talon.append(cardEl(null, { small: true }));
  else talon.append(el("span", { class: "small" }, "(not shown to this seat)"));
  // face up, a talon the ruleset hides is drawn all the same: say that the table did not see it
  if (v.talon && state.summary.talon_visible === false && state.seat === null)
    talon.append(el("span", { class: "small", id: "talon-hidden" }, " (shown to the declarer only: talon_visible off)"));
  c.append(talon);
  if (v.result) {
    const r = el("div", { class: "result", id: "deal-result" }, el("b", {}, "deal result: "));
    state.summary.players.forEach((p, s) => r.append(`${p} ${v.result.deltas[s] >= 0 ? "+" : ""}${v.result.deltas[s]}  `));
    const outcome = v.result.outcome || (state.data.summary && state.data.summary.outcome);
    if (outcome) r.append(el("div", { class: "small", id: "deal-outcome" }, outcome.replace("_", " ")));
    // what happened on the barrel (the engine names seats: show the bots' names)
    for (const e of v.result.events || [])
      r.append(el("div", { class: "small barrel-event" }, e.replace(/\bseat (\d+)/g, (_, k) => seatName(Number(k)))));
    c.append(r);
  }
  return c;
}

// The auction as `arena replay` says it: first hand's obligatory bid (classic's 100, which
// he holds without speaking: no action and no view's bids hold it) first, then the bids
// and passes spoken. First hand is the first of the active seats.
function bidsSaid(v) {
  const ob = state.summary.obligatory_bid;
  const held = ob !== null && ob !== undefined ? [{ seat: v.active_seats[0], action: `${ob} (obligatory)` }] : [];
  return [...held, ...v.bids];
}

function sidePanel(v) {
  const side = el("div", { class: "side" });
  // action log of the deal: click a line to jump there
  side.append(el("h3", {}, "Actions of this deal"));
  const log = el("ol", { class: "log", id: "action-log" });
  state.data.steps.forEach((st, i) => {
    if (!st.action) return;
    if (state.seat !== null && i > state.step) return;  // a seat has not seen what comes next
    const who = seatName(st.action.seat);
    const li = el("li", {
      class: (i === state.step ? "current" : i > state.step ? "future" : "") + (fallbackClass(st.action) ? " " + fallbackClass(st.action) : ""),
      dataset: { step: String(i) }, onclick: () => go(state.deal, i),
      title: st.action.ms !== null && st.action.ms !== undefined ? `${st.action.ms} ms${st.action.by ? " · " + st.action.by : ""}${isClientFallback(st.action) ? " (failed)" : ""}` : "",
    }, `${who}: `, actionEl(actionText(st.action.text)), fallbackBadge(st.action) ? [" ", fallbackBadge(st.action)] : null);
    log.append(li);
  });
  side.append(log);
  // the current action in view in the log's own box, the window left where it is:
  // scrollIntoView scrolled the window too, and on a narrow one (a phone: the log under the
  // table) every step took the table and the controls out of view
  const cur = log.querySelector("li.current");
  if (cur) setTimeout(() => scrollWithin(log, cur), 0);
  side.append(el("h3", {}, "Bids"));
  const bids = bidsSaid(v);
  side.append(el("div", { id: "bids" }, bids.length ? bids.map((b, i) => el("span", {}, i ? ", " : "", `${seatName(b.seat)} ${b.action}`)) : el("span", { class: "muted" }, "none yet")));
  side.append(el("h3", {}, "Passed cards"));
  side.append(el("div", { id: "gives" }, v.gives.length ? v.gives.map((g) =>
    el("div", {}, `${g.from !== null ? seatName(g.from) : "declarer"} → ${seatName(g.to)}: `, g.card ? cardEl(g.card, { small: true }) : el("span", { class: "muted" }, "hidden"))) : el("span", { class: "muted" }, "none")));
  side.append(el("h3", {}, "Marriages"));
  side.append(el("div", { id: "marriages" }, v.marriages.length ? v.marriages.map((m) =>
    el("div", {}, `${seatName(m.seat)}: ${m.suit ? m.suit + " marriage" : "ace marriage"} +${m.value}`)) : el("span", { class: "muted" }, "none")));
  side.append(el("h3", {}, "Tricks"));
  const tl = el("ol", { class: "log", id: "tricks" });
  const referee = refereeCards();
  v.tricks.forEach((t) => tl.append(el("li", {}, t.cards.map((p) => el("span", {}, trickCard(p.card, referee, { small: true }))), ` → ${seatName(t.winner)}`)));
  // none yet, or none at all in a deal conceded or thrown in: said, as of the sections above
  side.append(v.tricks.length ? tl : el("div", { id: "tricks", class: "muted" }, "none"));
  return side;
}

// Scroll `box` (and nothing around it) just enough to show `item`.
function scrollWithin(box, item) {
  const b = box.getBoundingClientRect(), r = item.getBoundingClientRect();
  if (r.top < b.top) box.scrollTop += r.top - b.top;
  else if (r.bottom > b.bottom) box.scrollTop += r.bottom - b.bottom;
}

function render() {
  const st = state.data.steps[state.step];
  const v = st.view;
  const n = state.summary.seats;
  document.getElementById("step-label").textContent =
    `deal ${state.deal + 1}/${state.summary.deals.length} · step ${state.step}/${state.data.steps.length - 1}` +
    (st.action ? ` · ${seatName(st.action.seat)}: ${actionText(st.action.text)}` +
      (isReferee(st.action) ? ` (${refereeLabel(st.action)})` : isClientFallback(st.action) ? ` (${CLIENT_NOTE})` : "") : " · dealt");
  const dealSel = document.getElementById("deal-select");
  for (const o of dealSel.options) o.textContent = dealLabel(+o.value);
  dealSel.value = String(state.deal);
  document.getElementById("match-head").replaceChildren(...matchHead().filter(Boolean));
  document.getElementById("seat-select").value = state.seat === null ? "" : String(state.seat);
  const slider = document.getElementById("step-slider");
  slider.max = String(state.data.steps.length - 1);
  slider.value = String(state.step);
  const felt = el("div", { class: "table-felt " + (n === 4 ? "four" : "three"), id: "table", dataset: { deal: String(state.deal), step: String(state.step), seat: state.seat === null ? "all" : String(state.seat) } });
  for (let s = 0; s < n; s++) felt.append(seatBox(v, s, st));
  felt.append(centerBox(v));
  document.getElementById("felt-wrap").replaceChildren(felt);
  document.getElementById("side-wrap").replaceChildren(sidePanel(v));
  document.getElementById("prev-action").disabled = state.deal === 0 && state.step === 0;
  document.getElementById("next-action").disabled = state.deal === state.summary.deals.length - 1 && state.step === state.data.steps.length - 1;
}

// --- what the position lets the page tell (a seat view: only what the seat had seen) -----

function atDealEnd() { return state.data !== null && state.step === state.data.steps.length - 1; }
function atMatchEnd() { return state.deal === state.summary.deals.length - 1 && atDealEnd(); }

// Deal k's line in the selector: who declared what and how it ended, in a seat view only for
// the deals over at the current position. The deal an abandoned match stopped in is marked
// "(unfinished)" in every view (the match's header says so too).
function dealLabel(k) {
  const s = state.summary, d = s.deals[k];
  const over = state.seat === null || k < state.deal || (k === state.deal && atDealEnd());
  if (d.outcome === "unfinished") return `deal ${k + 1} (unfinished)`;
  if (!over) return `deal ${k + 1}`;
  // the outcome in words, as the deal's result says it ("thrown_in" is the record's key)
  const outcome = (d.outcome || "").replace("_", " ");
  const who = d.declarer !== null && d.declarer !== undefined ? `${s.players[d.declarer]} ${d.contract !== null && d.contract !== undefined ? d.contract : d.bid || ""} ${outcome}` : "";
  return `deal ${k + 1}: ${who}`;
}

// The forfeits of the match: [{seat, deal (the deal's number, or null)}].
function forfeits() {
  const s = state.summary, out = [];
  for (const seat of s.forfeits || []) {
    const inc = (s.incidents || []).find((i) => i.kind === "forfeit" && i.seat === seat);
    out.push({ seat, deal: inc && Number.isInteger(inc.deal) ? inc.deal : null });
  }
  return out;
}

// Has the current position seen seat s forfeit? From the end of the deal it forfeited in
// (the record says in which deal, not at which action); a forfeit of unknown deal, at the end.
function forfeitKnown(s) {
  const f = forfeits().find((x) => x.seat === s);
  if (!f || !state.data) return false;
  if (f.deal === null) return atMatchEnd();
  return f.deal < state.data.number || (f.deal === state.data.number && atDealEnd());
}

// "12 deals", as `arena replay --list` counts them (the record's result.deals), and the deal
// an abandoned match stopped in apart: "0 deals + 1 unfinished".
function dealCount() {
  const s = state.summary, played = Number.isInteger(s.deals_played) ? s.deals_played : s.deals.length;
  const unfinished = s.deals.filter((d) => d.outcome === "unfinished").length;
  return `${played} deal${played === 1 ? "" : "s"}` + (unfinished ? ` + ${unfinished} unfinished` : "");
}

// The players with the result, how the match ended, who forfeited and the incidents per
// seat. A seat view tells the result and the incidents at the match's last step only (and a
// forfeit once it happened).
function matchHead() {
  const s = state.summary, r = s.result || {};
  const told = state.seat === null || atMatchEnd();
  const players = el("div", { id: "match-players" });
  s.players.forEach((p, i) => players.append(i ? " · " : "", botLink(p),
    told && r.scores ? ` ${r.scores[i]}` : "", told && r.places ? ` (#${r.places[i]})` : ""));
  const gone = forfeits().filter((f) => state.seat === null || forfeitKnown(f.seat))
    .map((f) => `${s.players[f.seat]} (seat ${f.seat}${f.deal !== null ? `, in deal ${f.deal + 1}` : ""})`);
  const meta = el("p", { class: "muted small", id: "match-meta" },
    `${s.ruleset_description || (s.ruleset && s.ruleset.name ? s.ruleset.name : "")} · seed ${s.seed} · ${dealCount()}` +
    (told && (s.ended || r.reason) ? ` · ended: ${s.ended || r.reason}` : ""),
    gone.length ? el("span", { id: "match-forfeits" }, ` · forfeited: ${gone.join(", ")}`) : null,
    told ? null : el("span", {}, " · the result shows at the match's end in a seat view"));
  // each seat's incidents as `arena replay` ends the match with them (the server's words:
  // the record's totals, not the first 20 of a kind it lists one by one)
  const lines = s.incident_lines || [];
  const incidents = told && lines.length
    ? el("div", { class: "muted small", id: "match-incidents", title: "strikes: timeouts, illegal and malformed answers; not strikes: bot_error (a decision the bot failed), wrong_request (an answer to no pending request), disconnects" },
      el("div", {}, "Incidents:"), lines.map((line) => el("div", {}, line)))
    : null;
  return [players, meta, incidents];
}

function buildPage() {
  const s = state.summary;
  const main = document.getElementById("main");
  const title = el("h1", {}, `Match ${s.match_id}`);
  const head = el("div", { id: "match-head" });
  const dealSel = el("select", { id: "deal-select", title: "jump to deal", onchange: (e) => go(+e.target.value, 0) });
  s.deals.forEach((d, k) => dealSel.append(el("option", { value: String(k) }, `deal ${k + 1}`)));
  const seatSel = el("select", { id: "seat-select", title: "whose view", onchange: (e) => go(state.deal, state.step, e.target.value === "" ? null : +e.target.value) },
    el("option", { value: "" }, "face up (all hands)"),
    s.players.map((p, i) => el("option", { value: String(i) }, `as seat ${i} (${p}) saw it`)));
  const btn = (id, text, title, fn) => el("button", { id, title, onclick: fn }, text);
  const controls = el("div", { class: "controls" },
    btn("prev-deal", "|◀ deal", "previous deal (PageUp)", prevDeal),
    btn("prev-trick", "◀◀ trick", "previous trick (Shift+←)", prevTrick),
    btn("prev-action", "◀ action", "previous action (←)", prevAction),
    btn("next-action", "action ▶", "next action (→)", nextAction),
    btn("next-trick", "trick ▶▶", "next trick (Shift+→)", nextTrick),
    btn("next-deal", "deal ▶|", "next deal (PageDown)", nextDeal),
    el("span", { class: "sep" }), dealSel, seatSel);
  const slider = el("div", { class: "controls" },
    el("input", { type: "range", id: "step-slider", min: "0", max: "0", value: "0", oninput: (e) => go(state.deal, +e.target.value) }),
    el("span", { id: "step-label", class: "small" }));
  const layout = el("div", { class: "replay-layout" }, el("div", { id: "felt-wrap" }), el("div", { id: "side-wrap", class: "panel" }));
  const share = el("p", { class: "small muted" }, "Link to this position: ", el("a", { id: "share-link", href: "#" }), " · keys: ",
    el("span", { class: "kbd" }, "←"), " ", el("span", { class: "kbd" }, "→"), " action, ",
    el("span", { class: "kbd" }, "Shift"), "+arrows trick, ", el("span", { class: "kbd" }, "PgUp"), " ", el("span", { class: "kbd" }, "PgDn"), " deal");
  main.replaceChildren(title, head, controls, slider, layout, share);
  document.addEventListener("keydown", (e) => {
    // Alt+←/→ are the browser's back and forward, Ctrl/Cmd+arrows its own: not the viewer's.
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    // The keys step as docs/web.md says after a click on the slider or a choice in a
    // selector too (focus stays there): the slider's own keys moved it by one step (Shift+→)
    // or backwards (PgDn), a select's ← → chose the next deal or seat. A select keeps ↑ ↓.
    const t = e.target.tagName;
    if ((t === "INPUT" && e.target.type !== "range") || t === "TEXTAREA") return;
    if (e.key === "ArrowRight") { e.preventDefault(); (e.shiftKey ? nextTrick : nextAction)(); }
    else if (e.key === "ArrowLeft") { e.preventDefault(); (e.shiftKey ? prevTrick : prevAction)(); }
    else if (e.key === "PageDown") { e.preventDefault(); nextDeal(); }
    else if (e.key === "PageUp") { e.preventDefault(); prevDeal(); }
  });
  window.addEventListener("hashchange", () => {
    const h = parseHash();
    if (h.deal !== state.deal || h.step !== state.step || h.seat !== state.seat) go(h.deal || 0, h.step || 0, h.seat);
  });
}

// The match's summary: its links (the players' pages, the leaderboard) lead to the match's
// own tournament, whichever the address names (none, when it came from `arena replay`).
function summaryCame(summary) {
  state.summary = summary;
  showTournament(summary.stored && summary.stored.tournament_id);
}

async function main() {
  header();
  try {
    summaryCame(await api(`/api/matches/${encodeURIComponent(matchId)}`));
    document.title = `Replay ${matchId} · Thousand Arena`;
    buildPage();
    const h = parseHash();
    await go(h.deal || 0, h.step || 0, h.seat);
    document.body.dataset.ready = "1";
  } catch (err) {
    showError("main", err);
    document.body.dataset.ready = "error";
  }
}
main();

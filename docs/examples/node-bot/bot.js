#!/usr/bin/env node
// A Thousand Arena bot in Node.js that speaks the arena.v1 protocol itself
// (proto/arena/v1/arena.proto, docs/protocol.md): it passes in the auction whenever it
// may, names the lowest contract and gives and plays its lowest card.
//
//   ARENA_TOKEN=... node bot.js --arena HOST:PORT [--name NAME] [--matches N] [--ca arena.pem]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const { values: opt } = parseArgs({
  options: {
    arena: { type: 'string', default: '127.0.0.1:50051' },
    token: { type: 'string', default: process.env.ARENA_TOKEN }, // the env: `ps` shows argv
    name: { type: 'string', default: 'node-lowest' },
    matches: { type: 'string' }, // leave after this many matches (default: until the arena ends)
    ca: { type: 'string' }, // TLS, trusting this certificate
    tls: { type: 'boolean', default: false }, // TLS, trusting the system's authorities
    proto: {
      type: 'string',
      default: process.env.ARENA_PROTO || path.join(__dirname, '../../../proto/arena/v1/arena.proto'),
    },
  },
});
if (!opt.token) {
  console.error('no token: set ARENA_TOKEN or give --token');
  process.exit(2);
}

// keepCase: the proto's field names; oneofs: `msg.kind` names the oneof member set;
// defaults: repeated fields are [] (a proto3 `optional` field still reads undefined when unset).
const def = protoLoader.loadSync(opt.proto, {
  keepCase: true, enums: String, longs: Number, defaults: true, oneofs: true,
});
const { Arena } = grpc.loadPackageDefinition(def).arena.v1;
const creds = opt.ca || opt.tls
  ? grpc.credentials.createSsl(opt.ca ? fs.readFileSync(opt.ca) : null)
  : grpc.credentials.createInsecure();
const newClient = () => new Arena(opt.arena, creds, {
  // A ping every 10 s notices a dead link within 15 s (more often than every 5 s: GOAWAY).
  'grpc.keepalive_time_ms': 10000,
  'grpc.keepalive_timeout_ms': 5000,
  // Views carry every earlier deal's result: a very long match outgrows the default 4 MiB.
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
});
let client = newClient();

const running = new Set(); // the ids of the matches under way
const finished = new Set(); // match ids whose end we have seen (a MatchEnded may come twice)
let matchesLeft = opt.matches === undefined ? undefined : Number(opt.matches);
let backoffMs = 500;
let internalErrors = 0;
let givenUpAt = Date.now() + 600_000; // stop retrying after 10 min without a Welcome

const RANKS = ['RANK_NINE', 'RANK_JACK', 'RANK_QUEEN', 'RANK_KING', 'RANK_TEN', 'RANK_ACE'];
const log = (...args) => console.log(new Date().toISOString(), ...args);

// The action to send back: one of `legal_actions`, echoed as received.
function choose(legal) {
  const pass = legal.find((a) => a.kind === 'pass');
  if (pass) return pass;
  const cost = (a) => {
    const card = (a.play ?? a.give)?.card;
    if (card) return RANKS.indexOf(card.rank);
    return (a.bid ?? a.contract)?.amount ?? Infinity; // concede, throw in: only if nothing else
  };
  return legal.reduce((best, a) => (cost(a) < cost(best) ? a : best));
}

function onEvent(ev) {
  if (ev.kind === 'deal_ended') {
    const d = ev.deal_ended;
    log(`${ev.match_id}: deal ${d.deal_number + 1} ${d.outcome} by seat ${d.declarer}`,
      `(contract ${d.contract}), scores ${d.scores.join(' ')}`);
  }
  // `action`, `talon_taken` and `deal_started` are in the next view too: nothing to track.
}

function onMessage(call, msg) {
  for (const ev of msg.events) onEvent(ev); // events come before the message's own content
  switch (msg.kind) {
    case 'welcome':
      log(`welcome as ${msg.welcome.bot_name} (server ${msg.welcome.server_version})`);
      backoffMs = 500;
      internalErrors = 0;
      givenUpAt = Date.now() + 600_000;
      break;
    case 'batch': // several messages in one, only because our Hello asked for "batch"
      for (const m of msg.batch.messages) onMessage(call, m);
      break;
    case 'match_started': {
      const m = msg.match_started;
      running.add(m.match_id); // resumed: maybe the first we hear of it (its start was lost)
      log(`${m.match_id}: ${m.resumed ? 'resumed' : 'started'} in seat ${m.seat}`,
        `of ${m.players.join(', ')} (${m.ruleset.name})${m.forfeited ? ', forfeited' : ''}`);
      break;
    }
    case 'decision_request': {
      const r = msg.decision_request;
      if (r.view.legal_actions.length === 0) break; // never sent; the deadline would play it
      call.write({ decision: { request_id: r.request_id, match_id: r.match_id,
        action: choose(r.view.legal_actions) } });
      break;
    }
    case 'decision_rejected': {
      const r = msg.decision_rejected;
      log(`${r.match_id}: request ${r.request_id} refused (${r.incident}, strike`,
        `${r.strikes}/${r.strikes_allowed}): ${r.message}`);
      break;
    }
    case 'match_ended': {
      const { match_id: id, result } = msg.match_ended;
      if (finished.has(id)) break; // sent again after a reconnect
      finished.add(id);
      running.delete(id);
      if (result.reason === 'interrupted') {
        log(`${id}: interrupted by the arena, it does not count`);
        break;
      }
      log(`${id}: ended (${result.reason}) after ${result.deals} deals, scores`,
        `${result.scores.join(' ')}, places ${result.places.join(' ')}`);
      if (matchesLeft !== undefined && --matchesLeft === 0) call.end(); // leave: half-close
      break;
    }
    case 'event': // not sent by this referee (events travel in `events`)
      onEvent(msg.event);
      break;
    case undefined: // only events (a deal's end)
      break;
    default: // a newer protocol's message: ignore it
      log(`ignored a ${msg.kind} message`);
  }
}

function onStatus(status) {
  const { OK, UNAVAILABLE, ALREADY_EXISTS, CANCELLED, RESOURCE_EXHAUSTED, INTERNAL, UNAUTHENTICATED } =
    grpc.status;
  const why = `${grpc.status[status.code]}: ${status.details}`;
  let waitMs = Math.min(backoffMs, 30_000) * (0.5 + Math.random() / 2);
  const retryAfter = Number(status.metadata?.get('retry-after-ms')[0]);
  if (status.code === OK) {
    log('the arena is done with us: bye');
    client.close();
    return;
  }
  // CANCELLED: not ours (our one cancel, the Welcome timer's, came as UNAVAILABLE above),
  // the arena's gRPC cut the call (a loaded arena's stop): reconnect, as on UNAVAILABLE.
  let retry = [UNAVAILABLE, ALREADY_EXISTS, CANCELLED].includes(status.code);
  if (status.code === RESOURCE_EXHAUSTED && retryAfter > 0) { // reconnecting too often
    retry = true;
    waitMs = Math.min(Math.max(retryAfter, 500), 30_000);
  }
  if (status.code === INTERNAL) { // gRPC core's own words are retried; others: 3 more tries
    retry = status.details.includes('Internal error from Core') || ++internalErrors <= 3;
  }
  if (!retry || Date.now() + waitMs > givenUpAt) {
    console.error(`the arena at ${opt.arena} ended the stream: ${why}`);
    process.exitCode = status.code === UNAUTHENTICATED ? 2 : 1;
    client.close();
    return;
  }
  log(`stream ended (${why}); reconnecting in ${Math.round(waitMs)} ms`);
  backoffMs *= 2;
  setTimeout(connect, waitMs);
}

function connect() {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${opt.token}`);
  const call = client.Play(metadata);
  // No Welcome within 30 s (a connection stuck in its handshake): drop the stream and the
  // connection (grpc-js would wait on the same one), try again.
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    call.cancel();
    client.close();
    client = newClient();
  }, 30_000);
  call.on('data', (msg) => {
    if (msg.kind === 'welcome') clearTimeout(timer);
    onMessage(call, msg);
  });
  call.on('error', () => {}); // every end, error or not, comes to 'status'
  call.on('status', (status) => {
    clearTimeout(timer);
    const silent = { code: grpc.status.UNAVAILABLE, details: 'no Welcome within 30 s' };
    // (only our own cancel is said so: a CANCELLED from the arena before the Welcome is
    // its own, as after it)
    onStatus(timedOut ? silent : status);
  });
  call.write({
    hello: {
      bot_name: opt.name,
      protocol_version: 1,
      client: 'thousand-arena-node-example/0.1.0',
      features: ['batch'],
      matches: matchesLeft, // undefined: not sent, no limit
      running: [...running], // after a reconnect: so that an end we missed counts
    },
  });
}

connect();

#!/usr/bin/env node
// An arena bot in Node.js, written from the .proto files and docs/protocol.md alone: it loads
// proto/arena/v1/referee.proto at run time (no generated code), joins the referee named by
// ARENA_ADDRESS with ARENA_TOKEN, and answers every DecisionRequest of every game with a legal
// action drawn uniformly at random from a seeded generator.
//
//   ARENA_ADDRESS  host:port, or unix:/path/to/socket           (required)
//   ARENA_TOKEN    the seat token the referee issued            (required)
//   ARENA_ROOT_CERT  a PEM file: connect over TLS, trusting this root
//   ARENA_PROTO_DIR  the folder holding arena/v1/*.proto (default: this repository's proto/);
//                    a folder given as the first argument (node bot.js PROTO_DIR) wins, and is
//                    what the bubblewrap sandbox tier needs: it shows a bot only the folders
//                    its command line names
//   ARENA_BOT_SEED   the generator's seed (default 7): the same seed makes the same choices
//
// Exit code 0 when the referee ends the session (SessionEnd), 2 otherwise; what went wrong is
// one line on stderr, which `arena play` keeps in the bot's log.
"use strict";

const fs = require("fs");
const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const BOT_NAME = "node-random";
const JOIN_TIMEOUT_MS = 30000; // a referee that is not up yet is waited for this long
const REJOIN_POLL_MS = 200;

function fail(message) {
  process.stderr.write(`node-bot: ${message}\n`);
  process.exit(2);
}

// A small seeded generator (mulberry32): a uniform float in [0, 1).
function generator(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function loadService(protoDir) {
  const file = path.join(protoDir, "arena", "v1", "referee.proto");
  if (!fs.existsSync(file)) {
    fail(`no ${file}: set ARENA_PROTO_DIR to the folder that holds arena/v1/*.proto`);
  }
  const definition = protoLoader.loadSync("arena/v1/referee.proto", {
    includeDirs: [protoDir],
    keepCase: true, // field names as in the .proto: match_id, decision_id, legal_actions
    longs: String, // uint64 decision_id comes as a string and is echoed as one
    enums: String,
    defaults: true,
    oneofs: true, // each oneof's case is a property: response.message === "decision_request"
  });
  return grpc.loadPackageDefinition(definition).arena.v1.RefereeService;
}

function credentials() {
  const rootCert = process.env.ARENA_ROOT_CERT;
  if (!rootCert) return grpc.credentials.createInsecure();
  try {
    return grpc.credentials.createSsl(fs.readFileSync(rootCert));
  } catch (error) {
    fail(`cannot read the root certificate ${rootCert}: ${error.message}`);
  }
}

// One session: every match the referee gives it, over one stream at a time.
class Session {
  constructor(client, token, seed) {
    this.client = client;
    this.token = token;
    this.random = generator(seed);
    this.graceMs = 0; // how long the referee lets a dropped stream be taken over (Welcome)
    this.welcomed = false; // the current stream was let in
    this.matches = 0;
    this.decisions = 0;
    this.events = 0;
  }

  // Resolves with SessionEnd's reason; rejects with a gRPC error when the stream ends otherwise.
  stream() {
    return new Promise((resolve, reject) => {
      const call = this.client.Play();
      let ended = null;
      this.welcomed = false;
      call.on("data", (response) => {
        const reason = this.handle(call, response);
        if (reason !== null) {
          ended = reason;
          call.end(); // half-close: the referee closes its side after SessionEnd
        }
      });
      call.on("error", (error) => (ended === null ? reject(error) : resolve(ended)));
      call.on("end", () => {
        if (ended !== null) resolve(ended);
        else reject(new Error("the stream ended without a SessionEnd"));
      });
      call.write({ hello: { token: this.token, bot_name: BOT_NAME, sdk_version: "node-0.1.0" } });
    });
  }

  // Returns SessionEnd's reason, or null while the session goes on.
  handle(call, response) {
    switch (response.message) {
      case "welcome":
        this.graceMs = response.welcome.rejoin_grace_ms;
        this.welcomed = true;
        return null;
      case "match_start":
        return null;
      case "decision_request": {
        const request = response.decision_request;
        this.events += request.events.length; // what the seat saw happen, oldest first
        const count = request.legal_actions.length;
        const index = request.legal_actions[Math.floor(this.random() * count)].index;
        this.decisions += 1;
        call.write({
          decision: { match_id: request.match_id, decision_id: request.decision_id, index },
        });
        return null;
      }
      case "match_end":
        this.events += response.match_end.events.length;
        this.matches += 1;
        return null;
      case "notice":
        process.stderr.write(`node-bot: referee notice: ${response.notice.message}\n`);
        return null;
      case "session_end":
        return response.session_end.reason;
      default:
        return null; // a message this version does not know: ignored, as protobuf would
    }
  }

  // Streams until SessionEnd; a stream that drops (UNAVAILABLE) is joined again with the same
  // token for as long as the referee's Welcome allowed.
  async play() {
    let droppedAt = null;
    for (;;) {
      try {
        return await this.stream();
      } catch (error) {
        // ALREADY_EXISTS while rejoining: the referee has not yet seen the old stream drop.
        const retry =
          error.code === grpc.status.UNAVAILABLE ||
          (error.code === grpc.status.ALREADY_EXISTS && droppedAt !== null);
        if (!retry || this.graceMs === 0) {
          const status = error.code === undefined ? "" : `${grpc.status[error.code]}: `;
          const detail = error.details || error.message;
          throw new Error(`the referee ended the session: ${status}${detail}`);
        }
        // The grace counts from the drop of a stream that had joined.
        if (this.welcomed || droppedAt === null) droppedAt = Date.now();
        if (Date.now() - droppedAt >= this.graceMs) {
          const within = `within ${this.graceMs} ms`;
          throw new Error(`the connection dropped and could not be joined again ${within}`);
        }
        process.stderr.write(`node-bot: the connection dropped (${error.details}): rejoining\n`);
        await new Promise((wake) => setTimeout(wake, REJOIN_POLL_MS));
      }
    }
  }
}

function waitForReady(client, address) {
  return new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + JOIN_TIMEOUT_MS, (error) => {
      const within = `within ${JOIN_TIMEOUT_MS / 1000} s`;
      if (error) reject(new Error(`could not reach the referee at ${address} ${within}`));
      else resolve();
    });
  });
}

async function main() {
  const address = process.env.ARENA_ADDRESS;
  const token = process.env.ARENA_TOKEN;
  if (!address || !token) fail("set ARENA_ADDRESS and ARENA_TOKEN");
  const seed = Number(process.env.ARENA_BOT_SEED || "7");
  if (!Number.isInteger(seed)) {
    fail(`ARENA_BOT_SEED must be an integer, not ${process.env.ARENA_BOT_SEED}`);
  }
  const protoDir =
    process.argv[2] || process.env.ARENA_PROTO_DIR || path.join(__dirname, "..", "..", "proto");
  const RefereeService = loadService(protoDir);
  const client = new RefereeService(address, credentials(), {
    // A bot started before its referee knocks again within a second.
    "grpc.initial_reconnect_backoff_ms": 100,
    "grpc.max_reconnect_backoff_ms": 1000,
  });
  const session = new Session(client, token, seed);
  try {
    await waitForReady(client, address);
    const reason = await session.play();
    process.stderr.write(
      `node-bot: session over after ${session.matches} matches, ${session.decisions} decisions, ` +
        `${session.events} events (${reason})\n`,
    );
  } catch (error) {
    fail(error.message);
  } finally {
    client.close();
  }
}

main();

// A client of the Huit API written against the types that openapi-typescript
// generates from openapi/openapi.json (src/generated/api.ts): no schema is
// written by hand here. It plays a whole 3-player game of every preset the
// server offers (two rounds each), always posting the first of its legal
// moves, then reads the game's rounds, the replay of its first round and
// its event log.
//
//   node dist/main.js http://127.0.0.1:8080

import createClient from "openapi-fetch";
import type { components, paths } from "./generated/api.js";

type Schemas = components["schemas"];
type TableView = Schemas["TableView"];
type StoredEvent = Schemas["StoredEvent"];

const base = process.argv[2] ?? "http://127.0.0.1:8080";
const api = createClient<paths>({ baseUrl: base });

/** The answer's data, or an error naming the problem's `code`. */
async function must<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
  what: string,
): Promise<T> {
  const { data, error, response } = await call;
  if (data === undefined) {
    throw new Error(`${what}: ${response.status} ${JSON.stringify(error)}`);
  }
  return data;
}

function bearer(token: string) {
  return { Authorization: `Bearer ${token}` };
}

/** Signs a new player up and logs it in: its bearer token. */
async function player(name: string): Promise<string> {
  const credentials = { username: name, password: "correct horse battery" };
  await must(api.POST("/v1/accounts", { body: credentials }), `sign up ${name}`);
  const session = await must(api.POST("/v1/sessions", { body: credentials }), `log in ${name}`);
  return session.token;
}

async function view(id: string, token: string): Promise<TableView> {
  return must(
    api.GET("/v1/tables/{id}/view", { params: { path: { id } }, headers: bearer(token) }),
    "view",
  );
}

/** A stored event, from one line of the NDJSON log. */
function isStoredEvent(value: unknown): value is StoredEvent {
  return (
    typeof value === "object" &&
    value !== null &&
    "seq" in value &&
    typeof value.seq === "number" &&
    "type" in value &&
    typeof value.type === "string" &&
    "data" in value
  );
}

/** Plays one game of `ruleset` to its end; returns what it saw. */
async function playGame(ruleset: string, tokens: [string, string, string]): Promise<string> {
  const [creator, ...others] = tokens;
  const table = await must(
    api.POST("/v1/tables", {
      body: { ruleset, seats: 3, options: { rounds: 2 } },
      headers: bearer(creator),
    }),
    `open a ${ruleset} table`,
  );
  const id = table.id;
  for (const token of others) {
    await must(
      api.POST("/v1/tables/{id}/players", { params: { path: { id } }, headers: bearer(token) }),
      "join",
    );
  }
  await must(
    api.POST("/v1/tables/{id}/start", { params: { path: { id } }, headers: bearer(creator) }),
    "start",
  );

  // Who sits where.
  const bySeat = new Map<number, string>();
  for (const token of tokens) {
    const seat = (await view(id, token)).my_seat;
    if (seat !== null) bySeat.set(seat, token);
  }

  let current = await view(id, creator);
  let moves = 0;
  let cardsPlayed = 0;
  let lastCard = "";
  while (current.status !== "finished") {
    if (moves > 50_000) throw new Error(`${ruleset}: no end after ${moves} moves`);
    const token = current.current_seat === null ? undefined : bySeat.get(current.current_seat);
    if (token === undefined) throw new Error(`${ruleset}: nobody to play`);
    const mine = await view(id, token);
    const move = mine.legal_moves[0];
    if (move === undefined) throw new Error(`${ruleset}: no legal move on turn`);
    const answer = await must(
      api.POST("/v1/tables/{id}/moves", {
        params: { path: { id } },
        body: { move, expected_version: mine.version },
        headers: bearer(token),
      }),
      `${ruleset}: move ${JSON.stringify(move)}`,
    );
    for (const event of answer.events) {
      if (event.type === "card_played") {
        cardsPlayed += 1;
        lastCard = event.data.card;
      }
    }
    current = answer.view;
    moves += 1;
  }

  const history = await must(
    api.GET("/v1/tables/{id}/rounds", { params: { path: { id } }, headers: bearer(creator) }),
    "rounds",
  );
  const winners = current.result?.winners ?? [];
  const firstRound = history.rounds[0];
  if (firstRound === undefined) throw new Error(`${ruleset}: no round in the history`);
  const pointsOfSeat0 = firstRound.points[0] ?? 0;

  const replay = await must(
    api.GET("/v1/tables/{id}/rounds/{n}/replay", {
      params: { path: { id, n: 1 }, query: { step: 0 } },
      headers: bearer(creator),
    }),
    "replay",
  );
  const dealt = replay.state.hands.map((hand) => hand.length).join("/");

  const log = await api.GET("/v1/tables/{id}/log", {
    params: { path: { id } },
    headers: bearer(creator),
    parseAs: "text",
  });
  if (log.data === undefined) throw new Error(`${ruleset}: log ${log.response.status}`);
  const events = log.data
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line): StoredEvent => {
      const value: unknown = JSON.parse(line);
      if (!isStoredEvent(value)) throw new Error(`${ruleset}: not an event: ${line}`);
      return value;
    });
  events.forEach((event, i) => {
    if (event.seq !== i + 1) throw new Error(`${ruleset}: seq ${event.seq} at line ${i + 1}`);
  });
  const first = events[0];
  const rulesOfLog = first?.type === "table_created" ? first.data.ruleset : "?";

  return (
    `client-ts preset=${rulesOfLog} moves=${moves} cards_played=${cardsPlayed} last_card=${lastCard} ` +
    `rounds=${history.rounds.length} dealt=${dealt} seat0_round1_points=${pointsOfSeat0} ` +
    `winners=${JSON.stringify(winners)} events=${events.length}`
  );
}

async function main(): Promise<void> {
  const rulesets = await must(api.GET("/v1/rulesets"), "rule sets");
  const suffix = Math.random().toString(36).slice(2, 8);
  const tokens: [string, string, string] = [
    await player(`ts_a_${suffix}`),
    await player(`ts_b_${suffix}`),
    await player(`ts_c_${suffix}`),
  ];
  for (const ruleset of rulesets) {
    console.log(await playGame(ruleset.id, tokens));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});

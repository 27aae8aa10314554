// Preloaded (`node --require`) into the conformance runner, which has no
// option for request headers: every HTTP request it makes to
// $BEARER_ORIGIN (its SDK client's fetch and its raw undici requests alike)
// carries `Authorization: Bearer $BEARER_TOKEN`, as a configured MCP client
// would send it. Requests to any other origin are left alone.
const { createRequire } = require("node:module");

const undici = createRequire(process.env.BEARER_UNDICI_FROM)("undici");
const origin = new URL(process.env.BEARER_ORIGIN).origin;
const value = `Bearer ${process.env.BEARER_TOKEN}`;

function withAuthorization(headers) {
  if (Array.isArray(headers)) {
    return [...headers, "authorization", value];
  }
  if (headers && typeof headers[Symbol.iterator] === "function" && typeof headers !== "string") {
    return [...Array.from(headers).flat(), "authorization", value];
  }
  return { ...(headers || {}), authorization: value };
}

const agent = new undici.Agent().compose((dispatch) => (options, handler) => {
  const target = new URL(String(options.origin)).origin;
  if (target === origin) {
    options = { ...options, headers: withAuthorization(options.headers) };
  }
  return dispatch(options, handler);
});
undici.setGlobalDispatcher(agent);

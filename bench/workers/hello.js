// The smallest worker: a fixed 200 for every request. Served under a hand-written minimal
// config and under the product's generated config, it prices the runtime path itself.
const BODY = '{"hello":"world"}';

export default {
  fetch() {
    return new Response(BODY, { headers: { "content-type": "application/json" } });
  },
};

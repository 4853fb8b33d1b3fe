// A request that states its body length two ways (Content-Length beside Transfer-Encoding)
// is how request smuggling starts: two parsers on the path can disagree on where it ends.
// workerd reads the chunked body and passes both headers on; the gateway refuses it.
import { GatewayError } from "../../kernel/contracts/errors";

/** Refuses ambiguous body framing with 400 `bad_request`. */
export function checkRequestFraming(headers: Headers): void {
  if (headers.has("transfer-encoding") && headers.has("content-length")) {
    throw new GatewayError("bad_request", {
      vars: { reason: "the body is framed twice (Content-Length and Transfer-Encoding)" },
    });
  }
}

// The address a request came from, as workerd reports it: what sign-in links and owner
// presence are bound to.

/** The client address workerd saw (request.cf.clientIp is "ip:port"), without the port. */
export function clientAddress(request: Request): string {
  const raw = String((request as { cf?: { clientIp?: string } }).cf?.clientIp ?? "");
  const colon = raw.lastIndexOf(":");
  const host = colon > 0 ? raw.slice(0, colon) : raw;
  return host.replace(/^\[|\]$/g, "");
}

// A child process of the bench's secrets section, in one of two roles, so the client being
// timed shares its event loop with neither:
//   upstream '{"key","cert","host"}'   a TLS origin answering every request with 2 bytes
//   broker '{"bundle","socketPath","grant","origin","caPath","placeholder","value"}'
//                                      the product's egress broker with one placeholder secret
// Each prints one JSON line on stdout once it is ready, and runs until it is sent SIGTERM.
import https from "node:https";
import { pathToFileURL } from "node:url";

const [role, configText] = process.argv.slice(2);
const config = JSON.parse(configText);

if (role === "upstream") {
  const server = https.createServer({ key: config.key, cert: config.cert }, (_req, res) => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": "2" });
    res.end("ok");
  });
  server.listen(0, config.host, () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`));
  process.on("SIGTERM", () => process.exit(0));
} else if (role === "broker") {
  const egress = await import(pathToFileURL(config.bundle).href);
  const origins = [egress.parseSecretOrigin(config.origin)];
  const broker = await egress.startBroker({
    app: "bench",
    grant: config.grant.map((text) => egress.parseHostPattern(text)),
    socketPath: config.socketPath,
    onDecision: () => {},
    trust: egress.loadOriginTrust({ extraCaFile: config.caPath }),
    secrets: [
      {
        name: "BENCH_KEY",
        use: { origins: [config.origin], header: "Authorization", format: "Bearer {value}" },
        origins,
        read: () => config.value,
        placeholder: config.placeholder,
      },
    ],
  });
  process.stdout.write(`${JSON.stringify({ socketPath: broker.socketPath })}\n`);
  process.on("SIGTERM", () => broker.close().then(() => process.exit(0)));
} else {
  process.stderr.write(`unknown role ${role}\n`);
  process.exit(2);
}

// A platform team's TypeScript client of the generated package (clients/typescript, `make
// clients`): it logs in at the gateway, then calls SessionService over gRPC (HTTP/2) with the
// documented metadata `authorization: Bearer <token>`. It prints one JSON object with what it
// saw; tests/test_generated_clients.py checks it.
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { SessionService } from "@vancetope/vance-client";

// Node's own, declared here so the check needs no @types/node.
declare const process: { argv: string[] };

async function login(gateway: string, tenant: string, user: string, password: string): Promise<string> {
  const r = await fetch(`http://${gateway}/brain/${tenant}/access/${user}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ password }),
  });
  const body = (await r.json()) as { token: string };
  return body.token;
}

async function main(): Promise<void> {
  const [gateway, sessions] = process.argv.slice(2);
  const token = await login(gateway, "default", "dev", "dev");
  const transport = createGrpcTransport({ baseUrl: `http://${sessions}` });
  const client = createClient(SessionService, transport);
  const headers = { authorization: `Bearer ${token}` };
  const created = await client.createSession(
    { tenantId: "default", projectId: "demo", ownerUserId: "dev", autonomous: true },
    { headers, timeoutMs: 30_000 },
  );
  const listed = await client.listSessions({ tenantId: "default" }, { headers, timeoutMs: 30_000 });
  let otherTenant = "OK";
  try {
    await client.listSessions({ tenantId: "elsewhere" }, { headers, timeoutMs: 30_000 });
  } catch (err) {
    otherTenant = Code[ConnectError.from(err).code];
  }
  console.log(
    JSON.stringify({
      created: created.sessionId,
      listed: listed.sessions.some((s) => s.sessionId === created.sessionId),
      other_tenant: otherTenant,
    }),
  );
}

await main();

// A TypeScript-SDK MCP server for the client-mode tests: `node server.mjs stdio` or `node server.mjs http` (prints its port).
import http from "node:http";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";

async function build() {
  const server = new McpServer(
    { name: "remote-ts", version: "1.32.2-test" },
    { instructions: "A TypeScript SDK server.", capabilities: { resources: { subscribe: true, listChanged: true } } },
  );
  server.registerResource(
    "greeting", "ts://greeting",
    { title: "The TS greeting", description: "Says hello", mimeType: "text/plain" },
    async (uri) => ({ contents: [{ uri: uri.href, mimeType: "text/plain", text: "hello from the TypeScript SDK" }] }),
  );
  server.registerResource(
    "user", new ResourceTemplate("ts://users/{name}", {
      list: undefined,
      complete: { name: (value) => ["ada", "alan", "grace"].filter((n) => n.startsWith(value)) },
    }),
    { title: "A user", mimeType: "text/plain" },
    async (uri, { name }) => {
      if (name === "nobody") {
        throw new Error("no user nobody");
      }
      return { contents: [{ uri: uri.href, mimeType: "text/plain", text: `user ${name}` }] };
    },
  );
  server.server.setRequestHandler(
    (await import("@modelcontextprotocol/sdk/types.js")).SubscribeRequestSchema,
    async () => ({}),
  );
  return server;
}

const mode = process.argv[2] ?? "stdio";
if (mode === "stdio") {
  await (await build()).connect(new StdioServerTransport());
} else {
  // Stateless Streamable HTTP: a server and transport per request, JSON answers (the SDK's own example).
  const httpServer = http.createServer(async (req, res) => {
    if (req.url !== "/mcp") {
      res.writeHead(404).end();
      return;
    }
    let body = "";
    for await (const chunk of req) body += chunk;
    const server = await build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => { transport.close(); server.close(); });
    await server.connect(transport);
    await transport.handleRequest(req, res, body ? JSON.parse(body) : undefined);
  });
  httpServer.listen(0, "127.0.0.1", () => console.log(String(httpServer.address().port)));
}

// One entry of tools/list as tabward sends it: the shape both the server (mcp/mcpServer.ts) and the list written
// ahead of time (mcp/toolsList.ts, generated) use. Its own file, so that the generated list imports no server.

export interface ListedTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; [key: string]: unknown };
  annotations: { readOnlyHint?: boolean; destructiveHint?: boolean };
}

"""A minimal server built on the official SDK (mcp==2.3.0), for comparison only."""

from mcp.server.mcpserver import MCPServer

server = MCPServer("sdk-minimal")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


if __name__ == "__main__":
    server.run("stdio")

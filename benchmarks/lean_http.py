"""A minimal HTTP/1.1 keep-alive client on asyncio streams, for load generation.

Why not httpx: a load generator shares this machine's two cores with the server it measures.
httpx spent about 5 ms of CPU per request here (0.7 of a core at 130 requests/s), as much as the
server's own handling, so with two service processes the generator, not the service, set the rate.
This client does only what the benchmark needs: one persistent connection per simulated client,
JSON bodies, ``Content-Length`` or chunked responses, a reconnect when the server closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any


class TransportFailure(Exception):
    """The connection failed or the response could not be read; named by its cause."""


@dataclass
class Response:
    status_code: int
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Connection:
    """One keep-alive connection; requests on it are sequential, as one client's turn is."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self._host = host
        self._port = port
        self._fixed = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None

    async def request(
        self,
        method: str,
        path: str,
        *,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        body = b"" if json_body is None else json.dumps(json_body).encode()
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        head = (
            f"{method} {path} HTTP/1.1\r\nHost: {self._host}:{self._port}\r\n{self._fixed}{extra}"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        )
        try:
            if self._writer is None:
                await self._connect()
            assert self._reader is not None
            assert self._writer is not None
            self._writer.write(head.encode() + body)
            return await self._read_response(self._reader)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
            await self.close()
            raise TransportFailure(type(exc).__name__) from exc

    async def _connect(self) -> None:
        self._reader, self._writer = await asyncio.open_connection(self._host, self._port)

    async def _read_response(self, reader: asyncio.StreamReader) -> Response:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        fields = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                fields[name.strip().lower()] = value.strip()
        if fields.get("transfer-encoding", "").lower() == "chunked":
            body = await self._read_chunked(reader)
        else:
            body = await reader.readexactly(int(fields.get("content-length", "0")))
        if fields.get("connection", "").lower() == "close":
            await self.close()
        return Response(status, body)

    @staticmethod
    async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
            if size == 0:
                await reader.readuntil(b"\r\n")  # no trailers are sent; the final CRLF
                return b"".join(parts)
            parts.append(await reader.readexactly(size))
            await reader.readexactly(2)

    async def close(self) -> None:
        writer, self._reader, self._writer = self._writer, None, None
        if writer is not None:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

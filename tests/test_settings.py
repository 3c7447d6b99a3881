"""One configuration: a TOML file, the environment and flags, flag > environment > file >
default, read by the library, ``convmem serve``, ``worker`` and ``mcp``; ``convmem config show``
prints it without secrets; a bad setting is an error naming its key."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

import convmem
from convmem.cli.main import main
from convmem.errors import InvalidConfig
from convmem.model.deadline import TimeLimits
from convmem.retrieval.openai_embedder import OpenAIEmbedder
from convmem.retrieval.rerank import RerankAPI
from convmem.settings import load_settings
from tests.live_service import free_port, wait_until_healthy
from tests.model_server import ModelServer

SECRET = "sk-live-THIS-MUST-NEVER-BE-PRINTED-42"


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """No convmem setting from the machine running the tests."""
    for name in list(os.environ):
        if name.startswith("CONVMEM_"):
            monkeypatch.delenv(name)


def write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.mark.usefixtures("clean_env")
def test_flag_beats_environment_beats_file_beats_default(tmp_path: Path) -> None:
    file = write(
        tmp_path / "convmem.toml",
        'database = "from-file.db"\nembedder = "hashing"\nreranker = "tei+http://127.0.0.1:9"\n'
        "[time_limits]\nretrieval = 3.0\nsummary = 4.0\n",
    )
    env = {"CONVMEM_EMBEDDER": "hashing:64", "CONVMEM_TIME_LIMIT_SUMMARY": "none"}
    settings = load_settings(flags={"embedder": "none"}, path=file, env=env)
    assert settings["embedder"] == "none" and settings.sources["embedder"] == "flag"
    settings = load_settings(path=file, env=env)
    assert settings["embedder"] == "hashing:64"
    assert settings.sources["embedder"] == "env CONVMEM_EMBEDDER"
    assert settings.database == "from-file.db"
    assert settings.sources["database"] == f"file {file}"
    limits = settings.time_limits()
    assert limits.retrieval == 3.0  # file
    assert limits.summary is None  # environment: "none" lifts the limit
    assert limits.memories == TimeLimits().memories  # default
    assert settings.sources["time_limits.memories"] == "default"
    # the file comes from CONVMEM_CONFIG when no path is given
    assert load_settings(env={"CONVMEM_CONFIG": str(file)}).database == "from-file.db"


@pytest.mark.usefixtures("clean_env")
@pytest.mark.parametrize(
    ("text", "key"),
    [
        ('embedder = "word2vec"\n', "embedder"),
        ('colour = "blue"\n', "colour"),
        ("[time_limits]\nretrieval = -1\n", "time_limits.retrieval"),
        ('[time_limits]\nretrieval = "fast"\n', "time_limits.retrieval"),
        (f'[summarizer]\napi_key = "{SECRET}"\n', "summarizer.api_key"),
        (f'embedder = "openai:text-embedding-3-small?api_key={SECRET}"\n', "embedder.api_key"),
        ("database = 12\n", "database"),
        ("embedder = [\n", "config"),
    ],
)
def test_a_bad_setting_names_its_key_and_never_a_secret(
    tmp_path: Path, text: str, key: str
) -> None:
    file = write(tmp_path / "convmem.toml", text)
    with pytest.raises(InvalidConfig) as bad:
        load_settings(path=file, env={})
    assert bad.value.key == key
    assert str(bad.value).startswith(f"{key}: ")
    assert SECRET not in str(bad.value)
    # the command line says the same and exits 2
    shown = CliRunner().invoke(main, ["config", "show", "--config", str(file)])
    assert shown.exit_code == 2 and f"error: {key}: " in shown.output
    assert SECRET not in shown.output


@pytest.mark.usefixtures("clean_env")
def test_a_bad_environment_value_says_where_it_came_from() -> None:
    with pytest.raises(InvalidConfig, match=r"\(env CONVMEM_TIME_LIMIT_RERANKER\)") as bad:
        load_settings(env={"CONVMEM_TIME_LIMIT_RERANKER": "soon"})
    assert bad.value.key == "time_limits.reranker"
    with pytest.raises(InvalidConfig, match=r"\(env CONVMEM_EMBEDDER\)"):
        load_settings(env={"CONVMEM_EMBEDDER": "word2vec"})
    with pytest.raises(InvalidConfig, match="no such file"):
        load_settings(env={"CONVMEM_CONFIG": "/nowhere/convmem.toml"})
    with pytest.raises(InvalidConfig, match=r"summarizer\.base_url"):
        load_settings(env={"CONVMEM_SUMMARIZER_MODEL": "llama"}).summarizer()


@pytest.mark.usefixtures("clean_env")
def test_config_show_masks_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", SECRET)
    file = write(
        tmp_path / "convmem.toml",
        'database = "postgresql://convmem:hunter2@db.internal:5432/convmem?password=hunter3"\n'
        'embedder = "openai+https://user:pw-embed@llm.internal/v1:bge?api_key_env=MY_LLM_KEY"\n'
        '[summarizer]\nbase_url = "http://127.0.0.1:11434/v1"\nmodel = "llama3.1"\n'
        'api_key_env = "MY_LLM_KEY"\n',
    )
    shown = CliRunner().invoke(
        main, ["config", "show", "--config", str(file), "--reranker", "tei+http://127.0.0.1:9"],
        env={"CONVMEM_TIME_LIMIT_RETRIEVAL": "0.5"},
    )  # fmt: skip
    assert shown.exit_code == 0, shown.output
    out = shown.output
    for secret in (SECRET, "hunter2", "hunter3", "pw-embed"):
        assert secret not in out
    assert "database = postgresql://convmem:***@db.internal:5432/convmem?password=***" in out
    assert f"# file {file}" in out
    assert "openai+https://user:***@llm.internal/v1:bge?api_key_env=MY_LLM_KEY" in out
    assert "reranker = tei+http://127.0.0.1:9  # flag" in out
    assert "time_limits.retrieval = 0.5  # env CONVMEM_TIME_LIMIT_RETRIEVAL" in out
    assert "summarizer.api_key_env = MY_LLM_KEY  # file" in out and ", set" in out
    assert "time_limits.tools = 1.0  # default" in out


@pytest.mark.usefixtures("clean_env")
def test_the_library_reads_the_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "lib.db"
    file = write(
        tmp_path / "convmem.toml",
        f'database = "{db}"\nembedder = "hashing:32"\nreranker = "tei+http://127.0.0.1:9"\n'
        "[time_limits]\nreranker = 0.25\n",
    )
    monkeypatch.setenv("CONVMEM_CONFIG", str(file))
    with convmem.open() as memory:
        assert memory.embedder is not None and memory.embedder.name == "hashing-32"
        assert isinstance(memory.reranker, RerankAPI)
        assert memory.config.time_limits.reranker == 0.25
        memory.scope("t", "u").create_conversation()
    assert db.exists()
    # arguments win: a name, an object, or "none"
    with convmem.open(tmp_path / "other.db", embedder="none", reranker="none") as memory:
        assert memory.embedder is None and memory.reranker is None
    monkeypatch.setenv("CONVMEM_EMBEDDER", "hashing:16")  # the environment beats the file
    with convmem.open(tmp_path / "other.db") as memory:
        assert memory.embedder is not None and memory.embedder.name == "hashing-16"
    # a Config given is used whole
    with convmem.open(tmp_path / "other.db", config=convmem.Config()) as memory:
        assert memory.config.time_limits.reranker == TimeLimits().reranker


@pytest.mark.usefixtures("clean_env")
def test_the_worker_reads_the_file(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    with convmem.open(db, embedder="none") as memory:
        memory.scope("t", "u").create_conversation().append("user", "a turn without a vector")
    file = write(tmp_path / "convmem.toml", f'database = "{db}"\nembedder = "hashing:32"\n')
    ran = CliRunner().invoke(main, ["worker", "--config", str(file), "--once"])
    assert ran.exit_code == 0, ran.output
    with convmem.open(db, embedder="hashing:32") as memory:
        assert memory.backfill_embeddings() == {"messages": 0, "terms": 0, "memories": 0}
    # a bad file stops it before any work, naming the key
    write(file, 'database = "x.db"\n[time_limits]\nsummary = 0\n')
    ran = CliRunner().invoke(main, ["worker", "--config", str(file), "--once"])
    assert ran.exit_code == 2 and "time_limits.summary: must be positive seconds" in ran.output


@pytest.mark.usefixtures("clean_env")
def test_mcp_reads_the_file(tmp_path: Path) -> None:
    file = write(tmp_path / "convmem.toml", 'embedder = "openai:m?api_key_env=NOT_SET_ANYWHERE"\n')
    ran = CliRunner().invoke(
        main, ["mcp", "--config", str(file), "--db", str(tmp_path / "m.db"), "--tenant", "t",
               "--user", "u"],
    )  # fmt: skip
    assert ran.exit_code == 2
    assert "embedder.api_key_env: the environment variable NOT_SET_ANYWHERE is not set" in (
        ran.output
    )


@pytest.fixture
def model_server() -> Iterator[ModelServer]:
    with ModelServer(dimensions=32) as running:
        yield running


@pytest.mark.usefixtures("clean_env")
def test_serve_reads_the_file(tmp_path: Path, model_server: ModelServer) -> None:
    db = tmp_path / "s.db"
    with convmem.open(db, embedder="none") as memory:
        token = memory.keys.create("acme", "app").token
    file = write(
        tmp_path / "convmem.toml",
        f'database = "{db}"\nembedder = "openai+{model_server.url}/v1:served-model"\n'
        f'reranker = "tei+{model_server.url}"\n',
    )
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CONVMEM_")}
    env["CONVMEM_CONFIG"] = str(file)
    server = subprocess.Popen(
        [sys.executable, "-m", "convmem.cli.main", "serve", "--port", str(port),
         "--log-level", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    headers = {"Authorization": f"Bearer {token}", "X-Convmem-User": "alice"}
    try:
        wait_until_healthy(base)
        with httpx.Client(base_url=base, headers=headers, timeout=30) as client:
            saved = client.post("/v1/memories", json={"text": "Prefers aisle seats"})
            assert saved.status_code in (200, 201), saved.text
            hits = client.get("/v1/memories/search", params={"q": "aisle seats"}).json()
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert hits and "rerank" in hits[0]["retrievers"] and "vector" in hits[0]["retrievers"]
    assert model_server.count("/v1/embeddings") >= 2  # warm-up, the memory, the query
    assert model_server.count("/rerank") == 1
    with convmem.open(db, embedder="none") as memory:
        assert memory.store  # the file's database is the one served
    assert isinstance(
        load_settings(path=file, env={}).embedder(), OpenAIEmbedder
    )  # the same name the service used

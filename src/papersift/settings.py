"""Every setting declared once (name, type, default, help), read from papersift.toml and PAPERSIFT_* variables."""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from papersift.datadir import DataDir
from papersift.errors import PapersiftError


@dataclass(frozen=True)
class Setting:
    name: str
    type: type
    default: Any
    help: str

    @property
    def env_var(self) -> str:
        return "PAPERSIFT_" + self.name.upper()


# The single declaration of every setting. `papersift settings` prints this table,
# the README documents it, and papersift.toml / environment variables override it.
SETTINGS: tuple[Setting, ...] = (
    # -- storage
    Setting("data_dir", str, "", "Folder for the database, indexes, exported models and caches "
            "(default: the per-user data dir)."),
    Setting("database_url", str, "",
            "Where the store lives: empty for the SQLite file papersift.db in the data dir, "
            "sqlite:///path/to/file.db, or postgresql://user:password@host/dbname (needs the "
            "postgres extra: pip install 'papersift[postgres]')."),
    Setting("vector_search", str, "auto",
            "Where semantic search walks its graph: store (the store's own index when it keeps "
            "one: PostgreSQL's pgvector HNSW, shared by every machine), local (a hnswlib file "
            "in this machine's data dir, built from the store's vectors by `papersift embed`: "
            "the walks leave the database server, several times faster) or auto: local while "
            "the store holds at most local_index_max_vectors vectors, store above. The SQLite "
            "store always searches locally."),
    Setting("local_index_max_vectors", int, 200_000,
            "With vector_search = auto on PostgreSQL: the most vectors this machine copies into "
            "its local file (about 3.5 KB of memory each while serving, 340 MB at 98,742)."),
    Setting("local_index_refresh", float, 600.0,
            "When PostgreSQL's semantic search walks the local file: seconds between `serve`'s "
            "checks that bring this machine's index file up to date with the store's vectors (it "
            "also does so before serving; 0: not after that, and `papersift embed` updates it "
            "too)."),
    Setting("vector_index_memory_mb", int, 2048,
            "Memory PostgreSQL may use to build its vector index after `embed --backfill` "
            "(about 1.3 GB per million papers keeps the whole graph in memory, much faster)."),
    # -- ingestion
    Setting("sources", str, "arxiv:cs.LG,cs.CL,cs.AI,cs.CV,stat.ML",
            "Space-separated SOURCE specs that `papersift update` ingests."),
    Setting("since_days", int, 3, "How many days back `papersift update` asks the arXiv API for."),
    Setting("arxiv_api_url", str, "https://export.arxiv.org/api/query", "arXiv API endpoint."),
    Setting("oai_url", str, "https://oaipmh.arxiv.org/oai", "arXiv OAI-PMH endpoint."),
    Setting("rss_url", str, "https://rss.arxiv.org/rss", "arXiv announcement feed base URL."),
    Setting("hf_url", str, "https://huggingface.co/api/daily_papers",
            "Hugging Face daily papers endpoint."),
    Setting("biorxiv_url", str, "https://api.biorxiv.org",
            "bioRxiv and medRxiv API base URL (its /details/{server}/... endpoint)."),
    Setting("crossref_url", str, "https://api.crossref.org",
            "Crossref REST API base URL (its /works endpoint)."),
    Setting("mailto", str, "",
            "Contact address sent with Crossref requests (puts them in Crossref's polite pool; "
            "empty: none is sent)."),
    Setting("request_delay", float, 3.0, "Seconds between requests to arXiv (arXiv asks for 3)."),
    Setting("http_timeout", float, 30.0,
            "Seconds an upstream request may take: to connect, for each read and for the whole "
            "response (one still arriving then is given up, not retried)."),
    Setting("http_retries", int, 5, "Retries on 429/5xx/timeouts before a source, the embeddings endpoint or the topic namer gives up."),
    Setting("http_backoff", float, 2.0, "First retry wait in seconds; doubles per retry (capped at 60)."),
    Setting("http_max_mb", int, 32,
            "Largest upstream response accepted, in MB after decompression (larger fails the source)."),
    Setting("http_max_redirects", int, 5,
            "Redirects followed per upstream request; a longer chain or a loop fails the source."),
    Setting("page_size", int, 200,
            "Records per page asked of the arXiv API (and of Crossref, at most 1,000)."),
    # -- what a record may hold (a record past a limit is skipped and reported)
    Setting("max_title_chars", int, 1000,
            "Longest title accepted, in characters (arXiv's longest are under 300)."),
    Setting("max_abstract_chars", int, 20000,
            "Longest abstract accepted, in characters (arXiv's longest are under 4,000)."),
    Setting("max_authors", int, 6000,
            "Most authors a paper may list (the largest collaborations list about 5,200)."),
    Setting("max_field_chars", int, 2000,
            "Longest author name, comment, DOI, journal reference, license or link accepted."),
    Setting("max_json_depth", int, 32,
            "Deepest nesting of JSON accepted in a file line or an upstream answer."),
    Setting("max_version", int, 1000, "Highest paper version accepted (v1 is the first)."),
    Setting("max_days_ahead", int, 3,
            "Latest date a record may carry, in days from today (time zones, early listings)."),
    # -- embeddings and search
    Setting("embedder", str, "local",
            "Embedding backend: local (ONNX all-MiniLM-L6-v2), sentence-transformers, or openai."),
    Setting("embed_quantize", bool, True,
            "Use the int8 ONNX model when it stays within cosine 0.98 of full precision."),
    Setting("embed_url", str, "", "OpenAI-compatible base URL for the openai embedder."),
    Setting("embed_model", str, "all-MiniLM-L6-v2", "Model name sent to the openai embedder."),
    Setting("embed_api_key", str, "", "API key for the openai embedder."),
    Setting("embed_batch", int, 64, "Texts per embedding batch."),
    Setting("embed_engine", str, "local",
            "Where `papersift embed` computes vectors: local (this process) or ray (Ray actors; "
            "pip install 'papersift[distributed]')."),
    Setting("topics_engine", str, "local",
            "Where `papersift topics assign` (and the pipeline's assignment) compares new papers "
            "with the topics: local (this process) or ray (Ray actors)."),
    Setting("ray_address", str, "",
            "Ray cluster for the ray engine (else RAY_ADDRESS, else a local Ray started on demand)."),
    Setting("ray_actors", int, 0,
            "Actors of the ray engine, each using `threads` (0: one per `threads` CPUs of the "
            "cluster)."),
    Setting("threads", int, 2, "Threads for ONNX Runtime and BLAS (sized on purpose: they fight)."),
    Setting("keyword_postings_min_papers", int, 0,
            "Papers from which the keywords stage builds papersift's own keyword postings, "
            "which rank plain-word queries ten times faster than the database's full-text "
            "index already at 30,000 papers (0: always, the default: one engine at every size)."),
    Setting("keyword_postings_rebuild_share", float, 0.05,
            "The keywords stage builds the postings anew once the papers added or changed "
            "since the last build pass this share of it (else it adds them to a tail)."),
    # -- links between papers, threads, weekly briefs
    Setting("links_old_papers", str, "",
            "An older arXiv snapshot (JSON lines, e.g. arxiv-cs-1993-2019.snapshot.jsonl.gz) whose "
            "common names (BERT, PPO) are never a recent paper's artefact; counted once, cached."),
    Setting("links_embed_missing", bool, True,
            "The links stage embeds the few papers a link decision needs that the embed stage "
            "has not reached yet (and keeps their vectors)."),
    # -- summaries (LLM writer)
    Setting("writer", str, "builtin", "Summary writer: builtin or llm."),
    Setting("llm_url", str, "", "OpenAI-compatible base URL for the LLM writer and topic naming."),
    Setting("llm_model", str, "", "Model name for the LLM writer."),
    Setting("llm_api_key", str, "", "API key for the LLM endpoint."),
    Setting("llm_concurrency", int, 4, "Concurrent LLM requests."),
    Setting("llm_timeout", float, 60.0, "Seconds before an LLM request times out."),
    # -- web
    Setting("site_title", str, "papersift", "Title shown on every page."),
    Setting("base_url", str, "http://127.0.0.1:8000", "Public URL of the site, used in feeds."),
    Setting("admin_token", str, "", "Token required for writes (flags); empty disables writes."),
    Setting("page_size_web", int, 50, "Papers per topic/author/search page."),
    Setting("web_cache_mb", int, 64, "MB of rendered pages each web worker keeps until the database changes (0: off)."),
    Setting("web_header_timeout", float, 10.0,
            "Seconds a client may take to send a request's headers (or its body) before it is "
            "cut off."),
    Setting("web_max_body_kb", int, 64, "Largest request body the site accepts, in KB."),
    # -- readers
    Setting("signup", str, "open",
            "Who may make an account: open (anyone), invite (with a code from "
            "`papersift readers invite`) or closed (only `papersift readers add`)."),
    Setting("secret_key", str, "",
            "Key that signs session cookies and links (default: one made once and kept in the "
            "data dir as secret.key)."),
    Setting("session_days", int, 30, "Days a reader stays logged in."),
    Setting("login_attempts", int, 5,
            "Failed logins allowed per name from one address in 15 minutes (four times as many "
            "per address, ten times as many per name from all addresses; past that, a sign-in "
            "link by email still lets the owner in)."),
    Setting("signup_attempts", int, 10,
            "Sign-up attempts allowed per address in 15 minutes."),
    Setting("feed_days", int, 7, "Days of new papers a reader's feed ranks."),
    Setting("feed_size", int, 30, "Papers in a reader's feed."),
    # -- delivery (email digests)
    Setting("smtp_host", str, "", "SMTP server that sends digests (empty: no email is sent)."),
    Setting("smtp_port", int, 25, "SMTP port (587 for starttls, 465 for tls)."),
    Setting("smtp_tls", str, "none", "none, starttls or tls."),
    Setting("smtp_user", str, "", "SMTP user name (empty: no login)."),
    Setting("smtp_password", str, "", "SMTP password."),
    Setting("smtp_timeout", float, 30.0, "Seconds before an SMTP conversation gives up."),
    Setting("mail_from", str, "papersift@localhost", "The From address of digests."),
    Setting("digest_size", int, 10, "Papers in a digest at most."),
    Setting("link_days", int, 30, "Days a rating or unsubscribe link in a digest works."),
)

_BY_NAME = {s.name: s for s in SETTINGS}


class SettingsError(PapersiftError, ValueError):
    """A setting has a value that cannot be used."""


def _coerce(setting: Setting, value: Any, where: str) -> Any:
    if isinstance(value, setting.type) and not (setting.type is int and isinstance(value, bool)):
        return value
    text = str(value).strip()
    try:
        if setting.type is bool:
            if text.lower() in {"1", "true", "yes", "on"}:
                return True
            if text.lower() in {"0", "false", "no", "off", ""}:
                return False
            raise ValueError(text)
        return setting.type(text)
    except ValueError:
        raise SettingsError(
            f"{setting.name} from {where}: {value!r} is not a valid {setting.type.__name__}"
        ) from None


@dataclass
class Settings:
    """Resolved settings: defaults, then papersift.toml, then environment, then explicit overrides."""

    values: dict[str, Any] = field(default_factory=dict)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name == "values":
            # Not a setting: pickle (Ray sends settings to its workers) asks for these on an
            # instance whose `values` is not set yet.
            raise AttributeError(name)
        try:
            return self.values[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def data_path(self) -> Path:
        path = Path(self.values["data_dir"] or platformdirs.user_data_dir("papersift"))
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def paths(self) -> DataDir:
        """The data folder's layout (created on first use)."""
        return DataDir(self.data_path)

    def replace(self, **overrides: Any) -> Settings:
        merged = dict(self.values)
        for name, value in overrides.items():
            if name not in _BY_NAME:
                raise SettingsError(f"unknown setting {name!r}")
            merged[name] = _coerce(_BY_NAME[name], value, "override")
        return Settings(merged)


def default_settings() -> Settings:
    """Every setting at its declared default (no config file, no environment)."""
    return Settings({s.name: s.default for s in SETTINGS})


def config_path(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    return Path(env.get("PAPERSIFT_CONFIG", "papersift.toml"))


def load_settings(
    environ: dict[str, str] | None = None, config: Path | None = None, **overrides: Any
) -> Settings:
    """Resolve every declared setting; unknown keys in the config file are an error."""
    env = os.environ if environ is None else environ
    values = {s.name: s.default for s in SETTINGS}
    path = config or config_path(env)
    if path.is_file():
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise SettingsError(f"{path}: {exc}") from None
        data = data.get("papersift", data)
        for key, value in data.items():
            if key not in _BY_NAME:
                raise SettingsError(f"{path}: unknown setting {key!r}")
            values[key] = _coerce(_BY_NAME[key], value, str(path))
    for setting in SETTINGS:
        if setting.env_var in env:
            values[setting.name] = _coerce(setting, env[setting.env_var], setting.env_var)
    return Settings(values).replace(**overrides)


def settings_markdown() -> str:
    """The table of settings the README shows (a test keeps the README in step with SETTINGS)."""
    lines = ["| setting | environment variable | default | what it does |", "|---|---|---|---|"]
    for s in SETTINGS:
        default = f"`{s.default}`" if s.default != "" else "(empty)"
        lines.append(f"| `{s.name}` | `{s.env_var}` | {default} | {s.help} |")
    return "\n".join(lines)

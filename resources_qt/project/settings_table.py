"""Every `[server]` key declared once: type, default, range, unit, section, label, help, liveness, where it applies."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CACHE_TTL_MAX_MS",
    "SETTINGS",
    "Applies",
    "Setting",
    "default",
    "setting",
    "settings_for",
]

CACHE_TTL_MAX_MS = 365 * 24 * 3600 * 1000
"""The longest cache hint a project may give: one year."""

Applies = Literal["identity", "capabilities", "pool", "readers", "engine", "cache"]
"""Where a key takes effect: the server's identity (the engine's name, version, instructions), the capabilities it
advertises, the snippet pool's limits, where readers run (`resource-studio serve` only), the engine's own limits, or
the read cache hint."""

Kind = type[str] | type[bool] | type[int] | type[float]


@dataclass(frozen=True, slots=True)
class Setting:
    """One `[server]` key: what it holds, its bounds, how the settings page shows it, where it applies."""

    key: str
    kind: Kind
    default: str | bool | int | float | None
    section: str
    label: str
    """The settings page's label, with its `&` mnemonic."""
    help: str
    widget: str
    """The object name of the settings page's field (stable: tests and accessibility find it by this)."""
    applies: Applies
    argument: str = ""
    """The keyword the engine or the pool takes it as, when not the key itself."""
    least: float | None = None
    most: float | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    optional: bool = False
    """None ("not set": the key absent from the file) is a value."""
    live: bool = False
    """A running server takes it at once; otherwise it applies at the next start."""
    multiline: bool = False
    word: str = ""
    """A word the key takes instead of a number (`workers = "auto"`)."""

    @property
    def name(self) -> str:
        """The keyword the engine or pool takes."""
        return self.argument or self.key

    def range_text(self) -> str:
        """"between 1 and 64 MB" (empty for keys without a range)."""
        if self.least is None or self.most is None:
            return ""
        return f"between {_number(self.least)} and {_number(self.most)}{_unit(self.unit)}"

    def problem(self, value: object) -> str | None:
        """Why `value` is not valid for this key (the message names the key), or None."""
        key = self.key
        if value is None and self.optional:
            return None
        if self.kind is bool:
            return None if isinstance(value, bool) else f"{key} must be true or false, not {type(value).__name__}"
        if self.kind is str:
            if not isinstance(value, str):
                return f"{key} must be a string, not {type(value).__name__}"
            if self.choices and value not in self.choices:
                listed = " or ".join(repr(choice) for choice in self.choices)
                return f"{key} must be {listed}, not {value!r}"
            return None
        if self.word and value == self.word:
            return None
        if self.word and isinstance(value, str):
            return f'{key} must be "{self.word}" or a number {self.range_text()}, not {value!r}'
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f"{key} must be a number, not {type(value).__name__}"
        least, most = self.least, self.most
        if least is not None and most is not None and not (math.isfinite(value) and least <= value <= most):
            return f"{key} must be {self.range_text()}, not {value}"
        return None

    def check(self, value: object) -> None:
        """Raise `ValidationError` (its field is the key) when `value` is not valid for this key."""
        from resources_qt.errors import ValidationError

        problem = self.problem(value)
        if problem is not None:
            raise ValidationError(problem, field=self.key)


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def _unit(unit: str) -> str:
    return f" {unit}" if unit else ""


_IDENTITY, _CAPS, _READERS, _LISTING, _LIMITS = "Identity", "Capabilities", "Readers", "Listing and cache", "Limits"

SETTINGS: tuple[Setting, ...] = (
    Setting("name", str, "Resource Studio", _IDENTITY, "&Name", "The server name clients see (serverInfo.name)",
            "serverNameEdit", "identity", live=True),
    Setting("version", str, "0.1.0", _IDENTITY, "&Version", "The server version clients see", "serverVersionEdit",
            "identity", live=True),
    Setting("instructions", str, "", _IDENTITY, "&Instructions",
            "Sent to clients at initialization: how to use this server's resources", "serverInstructionsEdit",
            "identity", live=True, multiline=True),
    Setting("notifications", bool, False, _CAPS, "Notifications", "Advertise and send resources/list_changed",
            "settingsNotifications", "capabilities", argument="enable_resource_notifications"),
    Setting("subscriptions", bool, False, _CAPS, "Subscriptions",
            "Accept resources/subscribe and subscriptions/listen", "settingsSubscriptions", "capabilities",
            argument="enable_resource_subscriptions"),
    Setting("reader_timeout", float, 5.0, _READERS, "Reader &timeout (s)", "Seconds a read may take, waiting included",
            "readerTimeoutEdit", "pool", argument="timeout", least=0.1, most=3600.0, unit="s", live=True),
    Setting("workers", int, "auto", _READERS, "&Workers",
            'Snippet worker processes: "auto" starts two and grows the pool while reads wait for a worker, up to '
            "4 per CPU and one per 100 MB of available memory (2 to 64), retiring the extra ones after 10 s idle; "
            "a number starts that many (and keeps up to as many spares warm while all are busy); in thread mode "
            '"auto" keeps one reader thread per CPU (at least two) and grows to the same cap while reads queue '
            "behind threads each held 5 ms by one read",
            "workersEdit", "pool", least=1, most=64, live=True, word="auto"),
    Setting("readers", str, "process", _READERS, "Readers &run in",
            "Where `serve` runs readers: worker processes (contained), or threads of the server (trusted "
            "projects only: faster, no memory or crash containment); the studio always uses processes",
            "readersCombo", "readers", choices=("process", "thread")),
    Setting("memory_limit_mb", int, 1024, _READERS, "&Memory limit (MB)", "Memory per worker", "memoryLimitEdit",
            "pool", least=64, most=1_048_576, unit="MB", live=True),
    Setting("page_size", int, 100, _LISTING, "&Page size", "Entries per resources/list page", "pageSizeEdit",
            "engine", least=1, most=10_000, live=True),
    Setting("cache_ttl_ms", int, None, _LISTING, "Cache &TTL (ms)", "Default cache hint for reads; empty: no hint",
            "cacheTtlEdit", "cache", least=0, most=CACHE_TTL_MAX_MS, unit="ms", optional=True, live=True),
    Setting("cache_scope", str, "private", _LISTING, "Cache &scope",
            "Who may cache a read: one client (private) or shared caches (public)", "cacheScopeCombo", "cache",
            choices=("public", "private"), live=True),
    Setting("max_queued_reads", int, 256, _LIMITS, "Queued reads",
            "Reads waiting for a worker before new ones are answered 'busy' (-32000)", "maxQueuedReadsEdit", "pool",
            least=1, most=100_000),
    Setting("resource_concurrency", int, "auto", _LIMITS, "Reads per resource",
            "Reads of one resource running at once, so one slow resource cannot take every worker: "
            '"auto" is as many as a number of `workers`, and with `workers = "auto"` half the cap (at least 2), '
            "so a reader waiting on I/O overlaps as the pool grows (an `async def` reader holds no worker or "
            'thread: "auto" lets 64 run at once)',
            "resourceConcurrencyEdit", "pool", least=1, most=64, word="auto"),
    Setting("max_processes", int, 1024, _LIMITS, "Processes per worker", "RLIMIT_NPROC for worker processes",
            "maxProcessesEdit", "pool", least=1, most=65_536),
    Setting("max_file_size_mb", int, 1024, _LIMITS, "File size (MB)", "RLIMIT_FSIZE for worker processes",
            "maxFileSizeEdit", "pool", least=1, most=1_048_576, unit="MB"),
    Setting("max_subscriptions", int, 1000, _LIMITS, "Subscriptions per session", "Subscriptions one session may hold",
            "maxSubscriptionsEdit", "engine", least=1, most=1_000_000),
    Setting("max_uri_length", int, 8192, _LIMITS, "URI length", "Longest URI a client may send", "maxUriLengthEdit",
            "engine", least=256, most=1_048_576),
    Setting("max_sessions", int, 10_000, _LIMITS, "Sessions",
            "Sessions held at once; the longest-idle one without a stream is evicted first", "maxSessionsEdit",
            "engine", least=1, most=1_000_000),
    Setting("session_idle_timeout", float, 3600.0, _LIMITS, "Session idle timeout (s)",
            "Seconds before an idle session without a stream may be evicted", "sessionIdleTimeoutEdit", "engine",
            least=1.0, most=604_800.0, unit="s"),
    Setting("mask_errors", bool, False, _LIMITS, "Mask reader errors",
            "Clients get a generic message for reader failures; the full text stays here and in the log",
            "maskErrorsSwitch", "engine"),
)  # fmt: skip

_BY_KEY: Mapping[str, Setting] = {row.key: row for row in SETTINGS}


def setting(key: str) -> Setting:
    """The row of `key` (KeyError naming the known keys for one that is not a `[server]` key)."""
    try:
        return _BY_KEY[key]
    except KeyError:
        raise KeyError(f"{key!r} is not a [server] key (known: {', '.join(_BY_KEY)})") from None


def default(key: str) -> Any:
    """The default of `key`, for the model's dataclass fields (typed there)."""
    return setting(key).default


def settings_for(values: object, applies: Applies, *, live_only: bool = False) -> dict[str, Any]:
    """The keywords of the keys that apply to `applies`, read off a `ServerSettings` (keyword: value).

    `live_only` keeps the keys a running server takes at once (the rest wait for its next start).
    """
    return {
        row.name: getattr(values, row.key)
        for row in SETTINGS
        if row.applies == applies and (row.live or not live_only)
    }

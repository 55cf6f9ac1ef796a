"""Lending idle workers to event loops: the dispatcher's side of `resources_qt.snippets.direct`.

A loop that finishes a call on a lent worker keeps it (`Slot.held`) while nothing waits in the
queue: its pipe stays registered with the loop, so the loop's next read costs one write and one
read, not a lend, a registration and a give-back. Whoever needs the worker back (a queued call,
the pool closing, shrinking or changing its settings) asks the holding loop to hand it on
(`recall_locked`); only that loop touches the pipe while it holds the worker.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import threading
import time
from collections import deque
from typing import TYPE_CHECKING, Any

from resources_qt.snippets.pool_limits import Limits

if TYPE_CHECKING:
    from resources_qt.snippets.slot import Job, Slot

__all__ = ["Lending"]

logger = logging.getLogger(__name__)


class Lending(abc.ABC):
    """The lending half of `Dispatcher` (which it is a base of); every method takes the dispatcher's lock."""

    cond: threading.Condition
    closed: bool
    started: bool
    generation: int
    limits: Limits
    jobs: deque[Job[Any]]
    running: dict[str, int]
    slots: list[Slot]
    lent_calls: int

    # -- what the dispatcher provides ------------------------------------------------

    @abc.abstractmethod
    def _release_locked(self, slot: Slot) -> None: ...

    @abc.abstractmethod
    def _pick_locked(
        self, *, for_loop: asyncio.AbstractEventLoop | None = None, spare: bool = False
    ) -> Job[Any] | None: ...

    @abc.abstractmethod
    def _keep_spare_locked(self) -> None: ...

    @abc.abstractmethod
    def _step_aside_locked(self) -> None: ...

    # -- lending ---------------------------------------------------------------------

    def lend(self, key: str, loop: asyncio.AbstractEventLoop) -> Slot | None:
        """An idle, current worker's slot for `loop` to drive one call of `key` on, or None.

        A worker `loop` holds already comes first. None while calls are queued (they go first),
        when `key` is at its concurrency limit, or when no worker is idle; the caller queues then.
        """
        with self.cond:
            if self.closed or not self.started or self.jobs:
                return None
            if self.running.get(key, 0) >= self.limits.per_resource:
                return None
            chosen: Slot | None = None
            for slot in self.slots:
                if slot.held:
                    holder = slot.lent_to
                    if holder is loop:
                        if not slot.retiring and slot.generation == self.generation:
                            chosen = slot
                            break
                    elif holder is not None and holder.is_closed():
                        self._take_back_held_locked(slot)
                if chosen is None and self._lendable_locked(slot):
                    chosen = slot
            if chosen is None:
                return None
            chosen.held = False
            chosen.state = "busy"
            chosen.lent_to = loop
            chosen.running_key = key
            self.running[key] = self.running.get(key, 0) + 1
            self.lent_calls += 1
            return chosen

    def _lendable_locked(self, slot: Slot) -> bool:
        worker = slot.worker
        return (
            slot.state == "idle"
            and slot.parked
            and slot.lent_to is None
            and not slot.retiring
            and slot.generation == self.generation
            and worker is not None
            and worker.looks_alive()
        )

    def return_unused(self, slot: Slot, *, alive: bool = True) -> None:
        """A lent worker given back before any call was sent to it (`alive`: not found dead meanwhile)."""
        with self.cond:
            self.lent_calls -= 1
        self.give_back(slot, alive=alive)

    def give_back(self, slot: Slot, *, alive: bool) -> bool:
        """A lent worker's call ended (`alive`: its worker lives on); True if the caller must stop the worker.

        True when the slot's thread ended meanwhile (the pool closing or shrinking). The caller has
        taken the pipe off its loop already: from here on the slot's thread may use it.
        """
        with self.cond:
            slot.lent_to = None
            slot.held = False
            slot.channel = None
            self._release_locked(slot)
            if slot.orphaned:
                return True
            slot.state = "idle" if alive else "starting"
            if not alive:
                slot.generation = -1  # its thread replaces (and reaps) the killed worker before any call
                self._step_aside_locked()
            if not alive or self.jobs or slot.retiring or self.closed or slot.generation != self.generation:
                # The slot's thread has something to do now (replace the worker, run a queued call);
                # otherwise it finds the worker back on its next liveness check (or the next queued
                # call's announcement), and a read in a row does not wake it for nothing.
                slot.wake.notify()
                self.cond.notify_all()
            return False

    def next_for_lent(
        self, slot: Slot, *, alive: bool, loop: asyncio.AbstractEventLoop, hold: bool = True
    ) -> Job[Any] | bool:
        """A lent worker's call ended: the next queued call for `loop` to run on it, True if `loop` keeps
        the worker for its next call (`hold`, nothing queued), False if the caller must give it back.

        Picked as a slot thread would (queue order, per-resource limit). A spare's worker is never
        held: it retires once idle.
        """
        with self.cond:
            self._release_locked(slot)
            return self._next_locked(slot, alive=alive, loop=loop, hold=hold and not slot.temporary)

    def unhold(self, slot: Slot, loop: asyncio.AbstractEventLoop) -> Job[Any] | bool:
        """`loop` was asked for the worker it holds (`recall_locked`): as `next_for_lent`, for an idle worker.

        True also when `loop` is in a call on it meanwhile (the call's end decides then).
        """
        with self.cond:
            slot.recalling = False
            if not slot.held or slot.lent_to is not loop:
                return True
            slot.held = False
            return self._next_locked(slot, alive=True, loop=loop, hold=True)

    def _next_locked(
        self, slot: Slot, *, alive: bool, loop: asyncio.AbstractEventLoop, hold: bool
    ) -> Job[Any] | bool:
        if (
            not alive
            or slot.orphaned
            or self.closed
            or slot.retiring
            or slot.generation != self.generation
            or slot.lent_to is not loop
        ):
            return False
        job = self._pick_locked(for_loop=loop)
        if job is not None:
            key = job.call.key
            self.running[key] = self.running.get(key, 0) + 1
            slot.running_key = key
            slot.state = "busy"
            job.taken_at = time.monotonic()
            self.lent_calls += 1
            if self.jobs:
                self._keep_spare_locked()
            return job
        if self.jobs or not hold:
            return False  # queued calls another loop or a pool thread must run: the worker goes back
        slot.held = True
        slot.state = "idle"
        return True

    def hand_over(self, slot: Slot, job: Job[Any]) -> None:
        """Put `job` back at the head of the queue and the lent worker back in its slot's hands."""
        with self.cond:
            self.lent_calls -= 1
            self.jobs.appendleft(job)
        self.give_back(slot, alive=True)

    def recall_locked(self, slot: Slot) -> None:
        """Ask the loop that holds `slot`'s idle worker to hand it on (it runs a call of its own from the
        queue on it, or gives it back to the slot's thread)."""
        if not slot.held or slot.recalling:
            return
        loop, channel = slot.lent_to, slot.channel
        if loop is None or channel is None:
            return
        slot.recalling = True
        try:
            loop.call_soon_threadsafe(channel.recall)
        except RuntimeError:  # closed: the slot's thread (or the next lend) takes the worker back
            slot.recalling = False
            slot.wake.notify()

    def _take_back_held_locked(self, slot: Slot) -> None:
        """`slot`'s worker was held by a loop that closed: idle, in step, its pipe's watch gone with the
        loop; the slot has it back as it is (no replacement, unlike a worker lent mid-call)."""
        channel = slot.channel
        if channel is not None:
            channel.retire()
        slot.held = False
        slot.recalling = False
        slot.channel = None
        slot.lent_to = None
        slot.state = "idle"
        slot.wake.notify()

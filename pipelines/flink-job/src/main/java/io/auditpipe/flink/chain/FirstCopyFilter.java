package io.auditpipe.flink.chain;

import io.auditpipe.flink.records.IngestedEvent;
import io.auditpipe.parser.RecordNumbers;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.function.Consumer;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;

/**
 * The first-copies half of {@link ChainEvents} (its javadoc says how): whether an event is the
 * first copy of its id on its server, counting a copy and sending a collision to {@link
 * ChainEvents#COLLISIONS}; the ids in a map keyed by the time to forget them, numbered records as
 * runs; what changed since the last checkpoint kept in memory and written back before the next.
 * Keyed state of the operator that holds it, on the server the operator's key names.
 */
final class FirstCopyFilter {
    private final boolean sortedState;

    /** (time to forget, id hash) -> the first line's fingerprint. */
    private final MapState<RememberedId, Long> remembered;

    /**
     * The numbered records remembered, as of the last checkpoint ({@link #runs} holds them since).
     */
    private final ValueState<NumberedRuns> numbered;

    /** The numbered runs of the servers seen since the last checkpoint. */
    private final Map<String, NumberedRuns> runs = new HashMap<>();

    /**
     * The ids each server's chain passed since the last checkpoint, not yet in {@link #remembered}.
     */
    private final Map<String, PassedIds> added = new HashMap<>();

    private final FirstCopies.IdHasher ids = new FirstCopies.IdHasher();
    private final Counter repeats;
    private final Counter collisions;

    FirstCopyFilter(RuntimeContext context, boolean sortedState) {
        this.sortedState = sortedState;
        remembered =
                context.getMapState(
                        new MapStateDescriptor<>(
                                "first-copies-by-time",
                                RememberedId.Serializer.INSTANCE,
                                LongSerializer.INSTANCE));
        numbered =
                context.getState(
                        new ValueStateDescriptor<>(
                                "first-copies-numbered", NumberedRuns.Serializer.INSTANCE));
        repeats = context.getMetricGroup().counter("repeatedEventsNotCounted");
        collisions = context.getMetricGroup().counter("idCollisions");
    }

    /**
     * Whether {@code e} is the first copy of its id on the server {@code ctx} is keyed by, whose
     * chain stands at {@code t}; a first copy is remembered until {@code forgetAt}.
     */
    boolean first(
            IngestedEvent e,
            KeyedProcessFunction<String, IngestedEvent, IngestedEvent>.Context ctx,
            ChainTip t,
            long forgetAt)
            throws Exception {
        String server = ctx.getCurrentKey();
        long number = RecordNumbers.number(e.event);
        if (number == RecordNumbers.NONE) {
            if (seenById(e, ctx, forgetAt)) return false;
            rememberId(e, server, forgetAt);
            return true;
        }
        String startup = RecordNumbers.startup(e.event);
        NumberedRuns r = runsOf(server, t);
        int seen = r.seen(startup, number, e.event.eventTimeMillis);
        boolean byId =
                seen == NumberedRuns.NOT_SEEN && ctx.timerService().currentWatermark() < r.mapUntil;
        if (byId && seenById(e, ctx, forgetAt)) return false; // counted, or a collision, there
        if (seen == NumberedRuns.COPY) {
            repeats.inc();
            return false;
        }
        if (seen == NumberedRuns.COLLISION) {
            collisions.inc();
            ctx.output(ChainEvents.COLLISIONS, ChainEvents.collision(e));
            return false;
        }
        if (!r.add(startup, number, e.event.eventTimeMillis, forgetAt)) { // past the bound: by id
            if (!byId) ids.hash(e.event.id);
            rememberId(e, server, forgetAt);
            r.mapUntil = Math.max(r.mapUntil, forgetAt);
        }
        return true;
    }

    /**
     * Whether the chain remembers this event's id (in memory since the last checkpoint, or in the
     * map), counting it as a copy or sending it to the collisions if so. Leaves its hash in {@link
     * #ids}.
     */
    private boolean seenById(
            IngestedEvent e,
            KeyedProcessFunction<String, IngestedEvent, IngestedEvent>.Context ctx,
            long forgetAt)
            throws Exception {
        ids.hash(e.event.id);
        long line = ids.line(e.lineSha256);
        PassedIds recent = added.get(ctx.getCurrentKey());
        long first =
                recent == null ? FirstCopies.NOT_SEEN : recent.lineOf(forgetAt, ids.high, ids.low);
        if (first == FirstCopies.NOT_SEEN) {
            Long stored = remembered.get(new RememberedId(forgetAt, ids.high, ids.low));
            if (stored != null) first = stored;
        }
        if (first == FirstCopies.NOT_SEEN) return false;
        if (first == FirstCopies.UNKNOWN_LINE
                || line == FirstCopies.UNKNOWN_LINE
                || first == line) {
            repeats.inc();
        } else {
            collisions.inc();
            ctx.output(ChainEvents.COLLISIONS, ChainEvents.collision(e));
        }
        return true;
    }

    /** Remembers the id whose hash {@link #ids} holds, with its line, until {@code forgetAt}. */
    private void rememberId(IngestedEvent e, String server, long forgetAt) {
        added.computeIfAbsent(server, k -> new PassedIds())
                .add(forgetAt, ids.high, ids.low, ids.line(e.lineSha256));
    }

    /** Remembers an id a former layout held (the operator's key its server) until its time. */
    void rememberFormer(long forgetAt, long high, long low, long line) throws Exception {
        remembered.put(new RememberedId(forgetAt, high, low), line);
    }

    /** Remembers an id a former layout held by its text, with its line's digest, until its time. */
    void rememberFormer(long forgetAt, String id, String lineSha256) throws Exception {
        ids.hash(id);
        remembered.put(new RememberedId(forgetAt, ids.high, ids.low), ids.line(lineSha256));
    }

    /** Forgets the server's ids and numbered records whose time is up by {@code due}. */
    void forget(String server, long due) throws Exception {
        PassedIds recent = added.get(server);
        if (recent != null) recent.forgetUpTo(due);
        Iterator<Map.Entry<RememberedId, Long>> it = remembered.iterator();
        boolean kept = false;
        while (it.hasNext()) {
            if (it.next().getKey().forgetAt() <= due) {
                it.remove();
            } else {
                kept = true;
                if (sortedState) break;
            }
        }
        if (!kept) remembered.clear(); // the heap backend would keep an empty map
        NumberedRuns r = runs.get(server);
        if (r == null) r = numbered.value();
        if (r != null) {
            r.forgetUpTo(due);
            if (r.mapUntil == Long.MAX_VALUE)
                r.mapUntil = latestForget(recent); // once, after a restore
            runs.put(server, r);
        }
    }

    /** Drops the server's numbered runs (a server with no link yet keeps none). */
    void clearRuns(String server) throws Exception {
        runs.remove(server);
        numbered.clear();
    }

    /**
     * The latest time to forget of the ids remembered in the map or since the last checkpoint;
     * Long.MIN_VALUE if none.
     */
    private long latestForget(PassedIds recent) throws Exception {
        long latest = recent == null ? Long.MIN_VALUE : recent.latestForget();
        for (RememberedId id : remembered.keys()) latest = Math.max(latest, id.forgetAt());
        return latest;
    }

    /**
     * The server's numbered runs: from memory since the last checkpoint, else from state, else new.
     * New for a server whose chain has links already (restored from a checkpoint taken before the
     * runs existed) means its numbered ids may be in the map: looked up there until the next
     * forgetting says until when ({@link NumberedRuns#mapUntil}).
     */
    private NumberedRuns runsOf(String server, ChainTip t) throws Exception {
        NumberedRuns r = runs.get(server);
        if (r == null) {
            r = numbered.value();
            if (r == null) {
                r = new NumberedRuns();
                if (t.seq > 0) r.mapUntil = Long.MAX_VALUE;
            }
            runs.put(server, r);
        }
        return r;
    }

    /** Writes what changed since the last checkpoint into state, each server under its key. */
    void writeBack(Consumer<String> setKey) throws Exception {
        for (Map.Entry<String, NumberedRuns> e : runs.entrySet()) {
            setKey.accept(e.getKey());
            numbered.update(e.getValue());
        }
        runs.clear();
        for (Map.Entry<String, PassedIds> e : added.entrySet()) {
            if (e.getValue().isEmpty()) continue;
            setKey.accept(e.getKey());
            remembered.putAll(e.getValue().asMap()); // on RocksDB one write batch
        }
        added.clear();
    }
}

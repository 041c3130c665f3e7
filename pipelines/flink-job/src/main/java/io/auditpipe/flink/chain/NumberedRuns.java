package io.auditpipe.flink.chain;

import io.auditpipe.flink.records.MutableSerializer;
import java.io.IOException;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The numbered records one server's chain passed and still remembers ({@link ChainEvents}), as runs
 * of consecutive numbers per sequence ({@link io.auditpipe.parser.RecordNumbers}: Percona's {@code
 * <n>_<startup time>}), instead of an entry per id.
 *
 * <p><b>Why.</b> A server's numbered records arrive in order, save for a few: lines written to a
 * rotated file after the collector closed it, lines re-sent after a collector restart. In order, a
 * number extends the sequence's last run, so the state is a few runs per server whatever the event
 * rate, and a checkpoint writes one small value per server that had events, not an entry per event.
 * A number out of order starts a run of its own, which merges with its neighbours as the numbers
 * between arrive.
 *
 * <p><b>Copies and collisions.</b> A number inside a run is a copy when its record's time lies
 * within the times of the run's records, which a copy's always does (the same line has the same
 * time). Outside them it is another record under a number already passed: a collision, as when a
 * server's numbering starts again under the same startup time. Within them, another line under the
 * same number passes for a copy: the line itself is not kept (two logs under one server name share
 * a startup time only by chance, and configuration allows one source per server).
 *
 * <p><b>Forgetting.</b> A run is remembered until the latest time to forget of its numbers, as an
 * id is ({@link ChainEvents}): the run still growing is kept as long as its sequence goes on.
 *
 * <p><b>Bounded.</b> At most {@link #MAX_RUNS} runs per server: a number that would start one more
 * is not taken ({@link #add} answers false) and the chain remembers its id as it does other
 * formats' ids. {@link #mapUntil} says until when such ids (or ids remembered before this state
 * existed) may be in that map, so that a number not in a run is looked up there only then.
 */
public final class NumberedRuns {
    /** What {@link #seen} answers. */
    public static final int NOT_SEEN = 0, COPY = 1, COLLISION = 2;

    /** The runs one server keeps at most, over all its sequences: 40 bytes each. */
    static final int MAX_RUNS = 4096;

    static final int FIELDS = 5; // first number, last number, earliest time, latest time, forget at

    /** Per sequence (its startup time), its runs ordered by their first number. */
    private final Map<String, Runs> sequences;

    private int runCount;

    /**
     * Until when (the watermark) a number outside the runs may be remembered by its id in the
     * chain's map instead: Long.MIN_VALUE for never, Long.MAX_VALUE until the map is found empty.
     */
    public long mapUntil = Long.MIN_VALUE;

    public NumberedRuns() {
        this(new HashMap<>(4));
    }

    private NumberedRuns(Map<String, Runs> sequences) {
        this.sequences = sequences;
        for (Runs r : sequences.values()) runCount += r.n;
    }

    /**
     * Whether this number of this sequence was passed, and if so, whether a record of this time is
     * its copy.
     */
    public int seen(String startup, long number, long time) {
        Runs r = sequences.get(startup);
        if (r == null) return NOT_SEEN;
        int i = r.runAtOrBefore(number);
        if (i < 0 || number > r.at(i, 1)) return NOT_SEEN;
        return time >= r.at(i, 2) && time <= r.at(i, 3) ? COPY : COLLISION;
    }

    /**
     * Remembers a number not seen yet (callers check {@link #seen} first) until at least {@code
     * forgetAt}; false, remembering nothing, when it would start a run past {@link #MAX_RUNS}.
     */
    public boolean add(String startup, long number, long time, long forgetAt) {
        Runs r = sequences.get(startup);
        if (r == null) {
            if (runCount >= MAX_RUNS) return false;
            r = new Runs();
            sequences.put(startup, r);
        }
        int i = r.runAtOrBefore(number);
        boolean extendsBefore = i >= 0 && r.at(i, 1) == number - 1;
        boolean extendsAfter = i + 1 < r.n && r.at(i + 1, 0) == number + 1;
        if (extendsBefore && extendsAfter) { // fills the one gap between two runs: they become one
            r.set(i, 1, r.at(i + 1, 1));
            r.widen(
                    i,
                    Math.min(time, r.at(i + 1, 2)),
                    Math.max(time, r.at(i + 1, 3)),
                    Math.max(forgetAt, r.at(i + 1, 4)));
            r.remove(i + 1);
            runCount--;
        } else if (extendsBefore) {
            r.set(i, 1, number);
            r.widen(i, time, time, forgetAt);
        } else if (extendsAfter) {
            r.set(i + 1, 0, number);
            r.widen(i + 1, time, time, forgetAt);
        } else {
            if (runCount >= MAX_RUNS) return false; // (a new sequence was refused above)
            r.insert(i + 1, number, time, forgetAt);
            runCount++;
        }
        return true;
    }

    /** Forgets every run whose time to forget is at or before {@code time}. */
    public void forgetUpTo(long time) {
        Iterator<Runs> it = sequences.values().iterator();
        while (it.hasNext()) {
            Runs r = it.next();
            runCount -= r.n;
            r.forgetUpTo(time);
            runCount += r.n;
            if (r.n == 0) it.remove();
        }
    }

    /** The runs remembered, over all sequences. */
    public int runs() {
        return runCount;
    }

    public int sequences() {
        return sequences.size();
    }

    /** One sequence's runs, {@link #FIELDS} longs each, ordered by their first number. */
    static final class Runs {
        long[] r;
        int n;

        Runs() {
            this(new long[2 * FIELDS], 0);
        }

        Runs(long[] r, int n) {
            this.r = r;
            this.n = n;
        }

        long at(int run, int field) {
            return r[run * FIELDS + field];
        }

        void set(int run, int field, long value) {
            r[run * FIELDS + field] = value;
        }

        void widen(int run, long earliest, long latest, long forgetAt) {
            int at = run * FIELDS;
            if (earliest < r[at + 2]) r[at + 2] = earliest;
            if (latest > r[at + 3]) r[at + 3] = latest;
            if (forgetAt > r[at + 4]) r[at + 4] = forgetAt;
        }

        /**
         * The last run whose first number is at most {@code number}, -1 if none; the last run first
         * (numbers come in order).
         */
        int runAtOrBefore(long number) {
            if (n == 0) return -1;
            if (r[(n - 1) * FIELDS] <= number) return n - 1;
            int lo = 0, hi = n - 2; // the answer is in [-1, n - 2]
            while (lo <= hi) {
                int mid = (lo + hi) >>> 1;
                if (r[mid * FIELDS] <= number) lo = mid + 1;
                else hi = mid - 1;
            }
            return hi;
        }

        void insert(int run, long number, long time, long forgetAt) {
            if ((n + 1) * FIELDS > r.length) r = java.util.Arrays.copyOf(r, r.length * 2);
            System.arraycopy(r, run * FIELDS, r, (run + 1) * FIELDS, (n - run) * FIELDS);
            int at = run * FIELDS;
            r[at] = number;
            r[at + 1] = number;
            r[at + 2] = time;
            r[at + 3] = time;
            r[at + 4] = forgetAt;
            n++;
        }

        void remove(int run) {
            System.arraycopy(r, (run + 1) * FIELDS, r, run * FIELDS, (n - run - 1) * FIELDS);
            n--;
        }

        void forgetUpTo(long time) {
            int kept = 0;
            for (int i = 0; i < n; i++) {
                if (r[i * FIELDS + 4] > time) {
                    if (kept != i) System.arraycopy(r, i * FIELDS, r, kept * FIELDS, FIELDS);
                    kept++;
                }
            }
            n = kept;
        }

        Runs copy() {
            return new Runs(java.util.Arrays.copyOf(r, Math.max(FIELDS, n * FIELDS)), n);
        }
    }

    // ---- state serialization
    // ---------------------------------------------------------------------

    /** Writes {@link #mapUntil}, then per sequence its startup time and its runs (5 longs each). */
    public static final class Serializer extends MutableSerializer<NumberedRuns> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        Serializer() {
            super(NumberedRuns::new, SerializerSnapshot::new);
        }

        @Override
        public NumberedRuns copy(NumberedRuns from) {
            Map<String, Runs> sequences = new HashMap<>(from.sequences.size() * 2 + 1);
            for (Map.Entry<String, Runs> e : from.sequences.entrySet())
                sequences.put(e.getKey(), e.getValue().copy());
            NumberedRuns copy = new NumberedRuns(sequences);
            copy.mapUntil = from.mapUntil;
            return copy;
        }

        @Override
        public void serialize(NumberedRuns record, DataOutputView target) throws IOException {
            target.writeLong(record.mapUntil);
            target.writeInt(record.sequences.size());
            for (Map.Entry<String, Runs> e : record.sequences.entrySet()) {
                target.writeUTF(e.getKey());
                Runs r = e.getValue();
                target.writeInt(r.n);
                for (int i = 0; i < r.n * FIELDS; i++) target.writeLong(r.r[i]);
            }
        }

        @Override
        public NumberedRuns deserialize(DataInputView source) throws IOException {
            long mapUntil = source.readLong();
            int sequences = source.readInt();
            Map<String, Runs> map = new HashMap<>(sequences * 2 + 1);
            for (int s = 0; s < sequences; s++) {
                String startup = source.readUTF();
                int n = source.readInt();
                long[] r = new long[Math.max(FIELDS, n * FIELDS)];
                for (int i = 0; i < n * FIELDS; i++) r[i] = source.readLong();
                map.put(startup, new Runs(r, n));
            }
            NumberedRuns runs = new NumberedRuns(map);
            runs.mapUntil = mapUntil;
            return runs;
        }
    }

    /** The serializer has no parameters: version 1 of this layout. */
    public static final class SerializerSnapshot
            extends SimpleTypeSerializerSnapshot<NumberedRuns> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}

package io.auditpipe.flink.chain;

import java.util.AbstractMap;
import java.util.AbstractSet;
import java.util.Iterator;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;

/**
 * The ids one server's chain passed since the last checkpoint ({@link ChainEvents}), each a {@link
 * RememberedId} (time to forget, the id's two halves) with its first line's fingerprint, in an
 * open-addressing table of longs ({@link FirstCopies.Table}): no entry object and no boxed value
 * per id. It holds up to a checkpoint interval of a server's events (400,000 at 80,000 events/s and
 * 5 s); as a {@code HashMap<RememberedId, Long>} its lookups, inserts and growth took 7% of the job
 * alone's samples (185d20b, 2026-11-27; bench/README.md "Why the job alone stays below 150,000
 * events/s per core"). {@link #asMap} hands the entries to {@code MapState.putAll} (on RocksDB one
 * write batch) without copying them.
 *
 * <p>An entry matches a lookup only with the same time to forget, as the map's keys do: a copy has
 * its original's time.
 */
final class PassedIds {
    private static final int FIRST_CAPACITY = 16; // a quiet server's buffer stays small

    private FirstCopies.Table table = new FirstCopies.Table(FIRST_CAPACITY);

    /**
     * The first line's fingerprint of this id passed with this time to forget, {@link
     * FirstCopies#NOT_SEEN} if it was not.
     */
    long lineOf(long forgetAt, long high, long low) {
        return table.lineOf(high, low, forgetAt);
    }

    /** Adds an id not passed yet (callers check {@link #lineOf} first). */
    void add(long forgetAt, long high, long low, long line) {
        table = table.with(high, low, line, forgetAt);
    }

    /** Drops every id whose time to forget is at or before {@code time}. */
    void forgetUpTo(long time) {
        if (time >= table.earliestForget)
            table = FirstCopies.Table.merged(table, FirstCopies.Table.EMPTY, time);
    }

    /** The latest time to forget of the ids held, Long.MIN_VALUE if none. */
    long latestForget() {
        long latest = Long.MIN_VALUE;
        long[] s = table.slots;
        for (int at = 0; at < s.length; at += FirstCopies.FIELDS) {
            if ((s[at] != 0 || s[at + 1] != 0) && s[at + 3] > latest) latest = s[at + 3];
        }
        return latest;
    }

    boolean isEmpty() {
        return table.size == 0;
    }

    int size() {
        return table.size;
    }

    /**
     * A read-only view of the entries as the map state's keys and values, in no particular order.
     */
    Map<RememberedId, Long> asMap() {
        FirstCopies.Table t = table;
        return new AbstractMap<>() {
            @Override
            public Set<Entry<RememberedId, Long>> entrySet() {
                return new AbstractSet<>() {
                    @Override
                    public int size() {
                        return t.size;
                    }

                    @Override
                    public Iterator<Entry<RememberedId, Long>> iterator() {
                        return new Iterator<>() {
                            private final long[] s = t.slots;
                            private int at = next(0);

                            private int next(int from) {
                                int i = from;
                                while (i < s.length && s[i] == 0 && s[i + 1] == 0)
                                    i += FirstCopies.FIELDS;
                                return i;
                            }

                            @Override
                            public boolean hasNext() {
                                return at < s.length;
                            }

                            @Override
                            public Entry<RememberedId, Long> next() {
                                if (at >= s.length) throw new NoSuchElementException();
                                Entry<RememberedId, Long> e =
                                        new SimpleImmutableEntry<>(
                                                new RememberedId(s[at + 3], s[at], s[at + 1]),
                                                s[at + 2]);
                                at = next(at + FirstCopies.FIELDS);
                                return e;
                            }
                        };
                    }
                };
            }
        };
    }
}

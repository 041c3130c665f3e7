package io.auditpipe.flink.chain;

import io.auditpipe.flink.records.MutableSerializer;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * The event ids one server's chain has passed and still remembers ({@link ChainEvents}), each with
 * a fingerprint of its first line and when to forget it: 32 bytes per id in open-addressing tables
 * of longs kept at most 3/4 full (43-64 bytes of heap per id), and 32 bytes per id in a checkpoint.
 *
 * <p><b>Why not a {@code MapState<String, ...>}.</b> It would take about 260 bytes of heap per id
 * (a hash-map node, the id string, a tuple, a boxed long and the 64-character digest), about 110
 * bytes per id in every checkpoint, and, on the heap state backend, a deep copy of the whole map at
 * the first access after each checkpoint (copy-on-write of a state value). State holds the ids of
 * (1 minute + the stats' allowed lateness) of events: at 10,000 events/s and 15 minutes of
 * lateness, 9.6 million ids, about 2.5 GB of heap (FirstCopiesFootprint, pipelines/job-bench).
 *
 * <p><b>Identity by a 128-bit hash of the id.</b> An id is the first 128 bits of the SHA-256 of its
 * UTF-8 bytes. Two different ids remembered at once share those bits with a probability of about n
 * / 2^128 per event (n ids remembered: 10^7 at 10,000 events/s), about 3 in 10^32: no such
 * coincidence is expected in the life of any fleet. The first line is kept as a 64-bit fingerprint
 * of its {@code line_sha256} (its first 64 bits), enough to tell a copy (the same line) from a
 * collision (another line under the same id); 0 stands for an unknown digest.
 *
 * <p><b>Copy-on-write friendly.</b> Entries go into a small mutable {@code delta} table; when it
 * holds a quarter of the {@code frozen} one (at least 4,096 entries) the two are merged into a new
 * frozen table, which is never changed afterwards. {@link Serializer#copy(FirstCopies)}, which the
 * heap state backend calls at the first access after a checkpoint began, shares the frozen table
 * and copies only the delta. Forgetting (once a minute, on the event-time timer) rebuilds the
 * frozen table without the expired entries.
 */
public final class FirstCopies {
    /** What {@link #lineOf} answers for an id not remembered. */
    public static final long NOT_SEEN = Long.MIN_VALUE;

    /** The line fingerprint of an event without a {@code line_sha256}. */
    public static final long UNKNOWN_LINE = 0L;

    private static final int MIN_DELTA = 4096;
    private static final int FIRST_DELTA_CAPACITY = 16; // a quiet server's state stays small
    static final int FIELDS = 4; // id high, id low, line fingerprint, forget at

    private Table frozen;
    private Table delta;

    public FirstCopies() {
        this(Table.EMPTY, new Table(FIRST_DELTA_CAPACITY));
    }

    private FirstCopies(Table frozen, Table delta) {
        this.frozen = frozen;
        this.delta = delta;
    }

    /** The first line's fingerprint of this id, {@link #NOT_SEEN} if it is not remembered. */
    public long lineOf(long idHigh, long idLow) {
        long line = delta.lineOf(idHigh, idLow);
        return line != NOT_SEEN ? line : frozen.lineOf(idHigh, idLow);
    }

    /**
     * Remembers an id not remembered yet (callers check {@link #lineOf} first) until {@code
     * forgetAt}.
     */
    public void add(long idHigh, long idLow, long line, long forgetAt) {
        delta = delta.with(idHigh, idLow, line, forgetAt);
        if (delta.size >= Math.max(MIN_DELTA, frozen.size / 4)) {
            frozen = Table.merged(frozen, delta, Long.MIN_VALUE);
            delta = new Table(FIRST_DELTA_CAPACITY);
        }
    }

    /**
     * Forgets every id whose time to forget is at or before {@code time}; false, without touching
     * the tables, when none is due. A watermark that jumps (a backlog, an import reading months in
     * seconds) fires many timers at once: the first forgets everything due, the rest find nothing.
     */
    public boolean forgetUpTo(long time) {
        if (time < Math.min(frozen.earliestForget, delta.earliestForget)) return false;
        frozen = Table.merged(frozen, delta, time);
        delta = new Table(FIRST_DELTA_CAPACITY);
        return true;
    }

    public int size() {
        return frozen.size + delta.size;
    }

    /** Each remembered entry: its id's two halves, its line's fingerprint and when to forget it. */
    public interface EntryVisitor {
        void visit(long idHigh, long idLow, long line, long forgetAt) throws Exception;
    }

    /** Calls {@code visitor} for each remembered entry, in no particular order. */
    public void forEach(EntryVisitor visitor) throws Exception {
        for (Table t : new Table[] {frozen, delta}) {
            long[] s = t.slots;
            for (int at = 0; at < s.length; at += FIELDS) {
                if (s[at] != 0 || s[at + 1] != 0)
                    visitor.visit(s[at], s[at + 1], s[at + 2], s[at + 3]);
            }
        }
    }

    // ---- identities and fingerprints ------------------------------------------------------------

    /** Hashes ids; one per operator instance (a MessageDigest is not thread-safe). */
    public static final class IdHasher {
        private final MessageDigest sha256;
        public long high;
        public long low;

        public IdHasher() {
            try {
                sha256 = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException("the JVM has no SHA-256", e);
            }
        }

        /** Sets {@link #high} and {@link #low} to the first 128 bits of the SHA-256 of the id. */
        public void hash(String id) {
            byte[] d = sha256.digest(id.getBytes(StandardCharsets.UTF_8));
            high = longAt(d, 0);
            low = longAt(d, 8);
            if (high == 0 && low == 0) low = 1; // (0, 0) marks an empty slot
        }

        /**
         * A 64-bit fingerprint of a line's {@code line_sha256}: its first 16 hex digits, or a hash
         * of other text.
         */
        public long line(String lineSha256) {
            if (lineSha256 == null) return UNKNOWN_LINE;
            long fp;
            if (lineSha256.length() >= 16 && isHex(lineSha256, 16)) {
                fp = Long.parseUnsignedLong(lineSha256.substring(0, 16), 16);
            } else {
                fp = longAt(sha256.digest(lineSha256.getBytes(StandardCharsets.UTF_8)), 0);
            }
            return fp == UNKNOWN_LINE || fp == NOT_SEEN ? 1L : fp;
        }

        private static boolean isHex(String s, int n) {
            for (int i = 0; i < n; i++) {
                if (Character.digit(s.charAt(i), 16) < 0) return false;
            }
            return true;
        }

        private static long longAt(byte[] b, int at) {
            long v = 0;
            for (int i = at; i < at + 8; i++) v = (v << 8) | (b[i] & 0xffL);
            return v;
        }
    }

    // ---- the tables
    // ------------------------------------------------------------------------------

    /**
     * Open addressing with linear probing; a slot is {@link #FIELDS} longs, empty when both id
     * halves are 0. Any capacity (not only powers of two): a slot is chosen by multiplying the id's
     * high 32 bits of its low half by the capacity, so a merged table is sized to be 3/4 full.
     */
    static final class Table {
        /**
         * Shared by every empty table that merging leaves: never put into ({@link #with} copies
         * it).
         */
        static final Table EMPTY = new Table(1);

        final long[] slots;
        final int capacity;
        int size;

        /** The earliest time to forget of the entries (Long.MAX_VALUE: none). */
        long earliestForget = Long.MAX_VALUE;

        Table(int capacity) {
            this.capacity = Math.max(2, capacity);
            slots = new long[this.capacity * FIELDS];
        }

        private Table(long[] slots, int size, long earliestForget) {
            this.slots = slots;
            this.capacity = slots.length / FIELDS;
            this.size = size;
            this.earliestForget = earliestForget;
        }

        private int home(long low) {
            return (int) (((low >>> 32) * capacity) >>> 32);
        }

        long lineOf(long high, long low) {
            if (size == 0) return NOT_SEEN;
            for (int i = home(low); ; i = i + 1 == capacity ? 0 : i + 1) {
                int at = i * FIELDS;
                long h = slots[at];
                long l = slots[at + 1];
                if (h == high && l == low) return slots[at + 2];
                if (h == 0 && l == 0) return NOT_SEEN;
            }
        }

        /**
         * As {@link #lineOf(long, long)}, for an entry with this time to forget too (another may
         * share the id).
         */
        long lineOf(long high, long low, long forgetAt) {
            if (size == 0) return NOT_SEEN;
            for (int i = home(low); ; i = i + 1 == capacity ? 0 : i + 1) {
                int at = i * FIELDS;
                long h = slots[at];
                long l = slots[at + 1];
                if (h == high && l == low && slots[at + 3] == forgetAt) return slots[at + 2];
                if (h == 0 && l == 0) return NOT_SEEN;
            }
        }

        /**
         * Puts into this table, or into a larger copy once it is 3/4 full or {@link #EMPTY}
         * (returned).
         */
        Table with(long high, long low, long line, long forgetAt) {
            Table t = this;
            if (this == EMPTY || (size + 1) * 4L > capacity * 3L) {
                t = new Table(capacity * 2);
                t.putAll(this, Long.MIN_VALUE);
            }
            t.put(high, low, line, forgetAt);
            return t;
        }

        void put(long high, long low, long line, long forgetAt) {
            for (int i = home(low); ; i = i + 1 == capacity ? 0 : i + 1) {
                int at = i * FIELDS;
                if (slots[at] == 0 && slots[at + 1] == 0) {
                    slots[at] = high;
                    slots[at + 1] = low;
                    slots[at + 2] = line;
                    slots[at + 3] = forgetAt;
                    size++;
                    if (forgetAt < earliestForget) earliestForget = forgetAt;
                    return;
                }
            }
        }

        /** Puts every entry of {@code from} that is to be kept after {@code forgottenUpTo}. */
        void putAll(Table from, long forgottenUpTo) {
            long[] s = from.slots;
            for (int at = 0; at < s.length; at += FIELDS) {
                if ((s[at] != 0 || s[at + 1] != 0) && s[at + 3] > forgottenUpTo) {
                    put(s[at], s[at + 1], s[at + 2], s[at + 3]);
                }
            }
        }

        static int kept(Table t, long forgottenUpTo) {
            if (forgottenUpTo == Long.MIN_VALUE) return t.size;
            int n = 0;
            long[] s = t.slots;
            for (int at = 0; at < s.length; at += FIELDS) {
                if ((s[at] != 0 || s[at + 1] != 0) && s[at + 3] > forgottenUpTo) n++;
            }
            return n;
        }

        /** The capacity that holds {@code n} entries 3/4 full. */
        static int capacityFor(int n) {
            return (int) Math.min(Integer.MAX_VALUE / FIELDS, (n * 4L + 2) / 3 + 1);
        }

        /**
         * A new table with the entries of both to be kept after {@code forgottenUpTo}, 3/4 full.
         */
        static Table merged(Table a, Table b, long forgottenUpTo) {
            int n = kept(a, forgottenUpTo) + kept(b, forgottenUpTo);
            if (n == 0) return EMPTY;
            Table t = new Table(capacityFor(n));
            t.putAll(a, forgottenUpTo);
            t.putAll(b, forgottenUpTo);
            return t;
        }

        Table copy() {
            return new Table(slots.clone(), size, earliestForget);
        }
    }

    // ---- state serialization
    // ---------------------------------------------------------------------

    /** Writes the entries (4 longs each); {@link #copy(FirstCopies)} shares the frozen table. */
    public static final class Serializer extends MutableSerializer<FirstCopies> {
        private static final long serialVersionUID = 1L;
        public static final Serializer INSTANCE = new Serializer();

        Serializer() {
            super(FirstCopies::new, SerializerSnapshot::new);
        }

        @Override
        public FirstCopies copy(FirstCopies from) {
            return new FirstCopies(from.frozen, from.delta.copy());
        }

        @Override
        public void serialize(FirstCopies record, DataOutputView target) throws IOException {
            target.writeInt(record.size());
            write(record.frozen, target);
            write(record.delta, target);
        }

        private static void write(Table t, DataOutputView target) throws IOException {
            long[] s = t.slots;
            for (int at = 0; at < s.length; at += FIELDS) {
                if (s[at] != 0 || s[at + 1] != 0) {
                    for (int f = 0; f < FIELDS; f++) target.writeLong(s[at + f]);
                }
            }
        }

        @Override
        public FirstCopies deserialize(DataInputView source) throws IOException {
            int n = source.readInt();
            Table t = n == 0 ? Table.EMPTY : new Table(Table.capacityFor(n));
            for (int i = 0; i < n; i++) {
                t.put(source.readLong(), source.readLong(), source.readLong(), source.readLong());
            }
            return new FirstCopies(t, new Table(FIRST_DELTA_CAPACITY));
        }

        @Override
        public void copy(DataInputView source, DataOutputView target) throws IOException {
            int n = source.readInt();
            target.writeInt(n);
            byte[] chunk = new byte[8192];
            for (long left = (long) n * FIELDS * Long.BYTES; left > 0; left -= chunk.length) {
                int len = (int) Math.min(chunk.length, left);
                source.readFully(chunk, 0, len);
                target.write(chunk, 0, len);
            }
        }
    }

    /** The serializer has no parameters: version 1 of this layout. */
    public static final class SerializerSnapshot extends SimpleTypeSerializerSnapshot<FirstCopies> {
        public SerializerSnapshot() {
            super(() -> Serializer.INSTANCE);
        }
    }
}

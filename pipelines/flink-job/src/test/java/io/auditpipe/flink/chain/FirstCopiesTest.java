package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

/**
 * {@link FirstCopies}: remembers and forgets exactly, survives serialization, and a copy never
 * changes its original.
 */
class FirstCopiesTest {
    private final FirstCopies.IdHasher ids = new FirstCopies.IdHasher();

    private void add(FirstCopies c, String id, String lineSha256, long forgetAt) {
        ids.hash(id);
        assertEquals(FirstCopies.NOT_SEEN, c.lineOf(ids.high, ids.low), id);
        c.add(ids.high, ids.low, ids.line(lineSha256), forgetAt);
    }

    private long lineOf(FirstCopies c, String id) {
        ids.hash(id);
        return c.lineOf(ids.high, ids.low);
    }

    private static String id(int i) {
        return "db-01/" + i + "_2026-11-24T06:00:00";
    }

    @Test
    void remembersEveryIdThroughMergesAndForgetsExactlyTheExpiredOnes() throws Exception {
        FirstCopies c = new FirstCopies();
        int n = 100_000; // many merges of the delta into the frozen table
        for (int i = 0; i < n; i++) add(c, id(i), "line-" + i, i < n / 2 ? 1_000 : 2_000);
        assertEquals(n, c.size());
        for (int i = 0; i < n; i++) assertEquals(ids.line("line-" + i), lineOf(c, id(i)), id(i));
        assertEquals(FirstCopies.NOT_SEEN, lineOf(c, id(n)));

        assertFalse(
                c.forgetUpTo(999), "nothing is due before 1,000: the tables are left as they are");
        assertEquals(n, c.size());
        assertTrue(c.forgetUpTo(1_000));
        assertEquals(n / 2, c.size());
        assertFalse(c.forgetUpTo(1_999), "what remains is due at 2,000");
        for (int i = 0; i < n; i++) {
            assertEquals(
                    i < n / 2 ? FirstCopies.NOT_SEEN : ids.line("line-" + i),
                    lineOf(c, id(i)),
                    id(i));
        }
        add(c, id(0), "line-0-again", 3_000); // forgotten, so new again
        assertTrue(c.forgetUpTo(2_000));
        assertEquals(1, c.size());
        assertFalse(c.forgetUpTo(2_999));
        FirstCopies restored = roundTrip(c);
        assertFalse(
                restored.forgetUpTo(2_999), "a restored table knows its earliest time to forget");
        assertTrue(restored.forgetUpTo(3_000));
        assertEquals(0, restored.size());
        assertEquals(ids.line("line-0-again"), lineOf(c, id(0)));
    }

    @Test
    void lineFingerprintsTellLinesApartAndKeepTheirSentinelsFree() {
        String a = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        String b = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";
        assertEquals(0x9f86d081884c7d65L, ids.line(a), "a SHA-256's first 64 bits");
        assertNotEquals(ids.line(a), ids.line(b));
        assertEquals(FirstCopies.UNKNOWN_LINE, ids.line(null));
        assertEquals(
                1L,
                ids.line("0000000000000000" + a.substring(16)),
                "0 means unknown, so a real 0 becomes 1");
        assertEquals(
                1L,
                ids.line("8000000000000000" + a.substring(16)),
                "nor can a line look like NOT_SEEN");
        assertNotEquals(ids.line("aaaa"), ids.line("bbbb"), "any other text is hashed");
    }

    @Test
    void aSerializedAndRestoredSetAnswersTheSame() throws Exception {
        FirstCopies c = new FirstCopies();
        for (int i = 0; i < 10_000; i++) add(c, id(i), "line-" + i, 60_000 + i);
        FirstCopies restored = roundTrip(c);
        assertEquals(c.size(), restored.size());
        for (int i = 0; i < 10_000; i++) assertEquals(lineOf(c, id(i)), lineOf(restored, id(i)));
        restored.forgetUpTo(60_000 + 4_999);
        assertEquals(5_000, restored.size(), "the times to forget came back too");
        assertEquals(0, roundTrip(new FirstCopies()).size());
    }

    @Test
    void changesToACopyNeverReachTheOriginal() throws Exception {
        // the heap state backend copies a value at its first access after a checkpoint began and
        // goes on with the copy while the checkpoint writes the original: the original must not
        // change
        FirstCopies original = new FirstCopies();
        for (int i = 0; i < 20_000; i++)
            add(original, id(i), "line-" + i, i % 2 == 0 ? 1_000 : 2_000);
        byte[] before = bytes(original);
        FirstCopies copy = FirstCopies.Serializer.INSTANCE.copy(original);
        for (int i = 20_000; i < 60_000; i++)
            add(copy, id(i), "line-" + i, 3_000); // merges on the copy
        copy.forgetUpTo(1_000);
        assertArrayEquals(before, bytes(original));
        assertEquals(20_000, original.size());
        assertEquals(10_000 + 40_000, copy.size());
    }

    @Test
    void theSerializerCopiesSerializedFormWithoutReadingIt() throws Exception {
        FirstCopies c = new FirstCopies();
        for (int i = 0; i < 100; i++) add(c, id(i), "line-" + i, 1);
        byte[] b = bytes(c);
        DataOutputSerializer out = new DataOutputSerializer(64);
        FirstCopies.Serializer.INSTANCE.copy(new DataInputDeserializer(b), out);
        assertArrayEquals(b, Arrays.copyOf(out.getSharedBuffer(), out.length()));
        assertEquals(4 + 100 * 32, b.length, "32 bytes per id");
    }

    private static byte[] bytes(FirstCopies c) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(1024);
        FirstCopies.Serializer.INSTANCE.serialize(c, out);
        return out.getCopyOfBuffer();
    }

    private static FirstCopies roundTrip(FirstCopies c) throws Exception {
        return FirstCopies.Serializer.INSTANCE.deserialize(new DataInputDeserializer(bytes(c)));
    }
}

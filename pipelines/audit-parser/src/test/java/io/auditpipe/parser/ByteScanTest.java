package io.auditpipe.parser;

import static org.junit.jupiter.api.Assertions.assertEquals;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/** ByteScan's word tests and indexOf against a byte-by-byte look. */
class ByteScanTest {
    @Property(tries = 3000)
    void wordTestsAreExact(
            @ForAll @Size(8) byte[] word,
            @ForAll byte value,
            @ForAll @IntRange(min = 0, max = 0x80) int limit) {
        long w = ByteScan.wordAt(word, 0);
        boolean is = false, below = false, high = false;
        for (byte b : word) {
            is |= b == value;
            below |= (b & 0xFF) < limit;
            high |= b < 0;
        }
        assertEquals(is, ByteScan.anyByteIs(w, value), "anyByteIs");
        assertEquals(below, ByteScan.anyByteBelow(w, limit), "anyByteBelow");
        assertEquals(high, ByteScan.anyHighBit(w), "anyHighBit");
    }

    @Property(tries = 3000)
    void indexOfIsTheFirstFromWhereItStarts(
            @ForAll @Size(max = 40) byte[] b,
            @ForAll @IntRange(min = -1, max = 3) int value,
            @ForAll @IntRange(min = -2, max = 45) int from) {
        int expected = -1;
        for (int i = Math.max(from, 0); i < b.length; i++) {
            if (b[i] == (byte) value) {
                expected = i;
                break;
            }
        }
        assertEquals(expected, ByteScan.indexOf(b, value, from));
    }
}

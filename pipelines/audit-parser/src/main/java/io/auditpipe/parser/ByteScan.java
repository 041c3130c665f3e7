package io.auditpipe.parser;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * Scans over bytes eight at a time (a long read from the array; the tests below are exact about
 * whether some byte of the word matches, not about which). Audit records are long and mostly ASCII:
 * validating them (Utf8), escaping them for the chain's canonical form (EventChain) and telling
 * whether they are ASCII for a shuffle (IngestedEventSerializer) each look at every byte.
 */
public final class ByteScan {
    private ByteScan() {}

    private static final VarHandle LONGS =
            MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    public static final long ONES = 0x0101010101010101L;
    public static final long HIGH_BITS = 0x8080808080808080L;

    /** The eight bytes from {@code at} (there must be eight), the first in the lowest bits. */
    public static long wordAt(byte[] b, int at) {
        return (long) LONGS.get(b, at);
    }

    /** Whether some byte of {@code w} has its high bit set (is not ASCII). */
    public static boolean anyHighBit(long w) {
        return (w & HIGH_BITS) != 0;
    }

    /** Whether some byte of {@code w} is {@code value}. */
    public static boolean anyByteIs(long w, int value) {
        long x = w ^ (ONES * (value & 0xFF));
        return ((x - ONES) & ~x & HIGH_BITS) != 0;
    }

    /**
     * Whether some byte of {@code w} is below {@code limit} as an unsigned number ({@code limit} at
     * most 0x80).
     */
    public static boolean anyByteBelow(long w, int limit) {
        return ((w - ONES * limit) & ~w & HIGH_BITS) != 0;
    }

    /** The first index at or after {@code from} where {@code b} holds {@code value}, or -1. */
    public static int indexOf(byte[] b, int value, int from) {
        int i = Math.max(from, 0);
        int n = b.length;
        while (i + 8 <= n && !anyByteIs(wordAt(b, i), value)) i += 8;
        for (; i < n; i++) {
            if (b[i] == (byte) value) return i;
        }
        return -1;
    }
}

package io.auditpipe.parser;

/**
 * Strict UTF-8 validation (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF). Every
 * line is validated before it is parsed, and audit logs are mostly ASCII: eight bytes at a time are
 * passed over while none has its high bit set (ByteScan; Utf8Test compares with the JDK's decoder).
 */
public final class Utf8 {
    private Utf8() {}

    /**
     * Returns the offset of the first byte that is not part of valid UTF-8, or -1 if all is valid.
     */
    public static int firstInvalidByte(byte[] b) {
        int i = 0;
        int n = b.length;
        while (i < n) {
            if (i + 8 <= n && !ByteScan.anyHighBit(ByteScan.wordAt(b, i))) {
                i += 8;
                continue;
            }
            int c = b[i] & 0xff;
            if (c < 0x80) {
                i++;
                continue;
            }
            int need;
            int min;
            if (c >= 0xc2 && c <= 0xdf) {
                need = 1;
                min = 0x80;
            } else if (c >= 0xe0 && c <= 0xef) {
                need = 2;
                min = 0x800;
            } else if (c >= 0xf0 && c <= 0xf4) {
                need = 3;
                min = 0x10000;
            } else return i;
            if (i + need >= n) return i; // truncated sequence at the end
            int cp = c & (0x3f >> need);
            for (int k = 1; k <= need; k++) {
                int cc = b[i + k] & 0xff;
                if ((cc & 0xc0) != 0x80) return i;
                cp = (cp << 6) | (cc & 0x3f);
            }
            if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
            i += need + 1;
        }
        return -1;
    }
}

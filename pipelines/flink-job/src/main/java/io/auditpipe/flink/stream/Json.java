package io.auditpipe.flink.stream;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * JSON of the values a stream message holds (maps, lists, strings, numbers, booleans, dates as
 * ISO-8601 in UTC, null), written directly into a char buffer and encoded as UTF-8 once: the BSON
 * library's writer goes through its codec registry for every value (about 15 us for a small event,
 * measured 2026-11-29), and a StringBuilder copies a part of a string a character at a time
 * ({@code append(CharSequence, int, int)} on JDK 17), which every escaped string is made of (the
 * original record is JSON itself, full of quotes): a fifth of the job alone's samples in a profile of
 * 2026-12-02. A string is copied into the buffer whole ({@link String#getChars}) and scanned there; one
 * with characters to escape has the rest written again in runs between them.
 */
final class Json {
    private Json() {}

    /** {@code value} as JSON, UTF-8. */
    static byte[] utf8(Object value) {
        Writer w = new Writer();
        w.value(value);
        return new String(w.buf, 0, w.n).getBytes(StandardCharsets.UTF_8);
    }

    /** {@code value} as JSON. */
    static String write(Object value) {
        Writer w = new Writer();
        w.value(value);
        return new String(w.buf, 0, w.n);
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private static final class Writer {
        private char[] buf = new char[2048];
        private int n;

        private void room(int more) {
            if (n + more > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, n + more));
        }

        private void raw(String s) {
            room(s.length());
            s.getChars(0, s.length(), buf, n);
            n += s.length();
        }

        private void ch(char c) {
            room(1);
            buf[n++] = c;
        }

        void value(Object v) {
            if (v == null) {
                raw("null");
            } else if (v instanceof String s) {
                string(s);
            } else if (v instanceof Map<?, ?> m) {
                ch('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!first) ch(',');
                    first = false;
                    string(String.valueOf(e.getKey()));
                    ch(':');
                    value(e.getValue());
                }
                ch('}');
            } else if (v instanceof List<?> l) {
                ch('[');
                for (int i = 0; i < l.size(); i++) {
                    if (i > 0) ch(',');
                    value(l.get(i));
                }
                ch(']');
            } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
                raw(Long.toString(((Number) v).longValue()));
            } else if (v instanceof Number num) {
                double d = num.doubleValue();
                raw(Double.isFinite(d) ? Double.toString(d) : "null");
            } else if (v instanceof Boolean bool) {
                raw(bool ? "true" : "false");
            } else if (v instanceof Date date) {
                string(Instant.ofEpochMilli(date.getTime()).toString()); // schemas/audit-event.schema.json's date-time
            } else {
                string(String.valueOf(v)); // nothing else reaches a message
            }
        }

        /** The characters a JSON string writes escaped (below 0x20, the quote, the backslash, U+2028 and U+2029). */
        private static boolean escaped(char c) {
            return c < 0x20 || c == '"' || c == '\\' || c == 0x2028 || c == 0x2029;
        }

        /** Where the rest of a string with escapes is copied from (grown as needed, reused). */
        private char[] tail = new char[256];

        void string(String s) {
            int len = s.length();
            room(len + 2);
            buf[n++] = '"';
            // copied whole, then scanned where it lies: an array's characters are read faster than a String's
            s.getChars(0, len, buf, n);
            int end = n + len;
            int i = n;
            while (i < end && !escaped(buf[i])) i++;
            if (i < end) {
                int rest = end - i;
                if (tail.length < rest) tail = new char[Math.max(rest, 2 * tail.length)];
                System.arraycopy(buf, i, tail, 0, rest);
                n = i;
                escapedRest(rest);
            } else {
                n = end;
            }
            room(1);
            buf[n++] = '"';
        }

        /** The first {@code rest} characters of {@link #tail}, written with their escapes. */
        private void escapedRest(int rest) {
            int start = 0;
            for (int j = 0; j < rest; j++) {
                char c = tail[j];
                if (!escaped(c)) continue;
                room(j - start + 6);
                System.arraycopy(tail, start, buf, n, j - start);
                n += j - start;
                buf[n++] = '\\';
                switch (c) {
                    case '"' -> buf[n++] = '"';
                    case '\\' -> buf[n++] = '\\';
                    case '\n' -> buf[n++] = 'n';
                    case '\r' -> buf[n++] = 'r';
                    case '\t' -> buf[n++] = 't';
                    case '\b' -> buf[n++] = 'b';
                    case '\f' -> buf[n++] = 'f';
                    default -> {
                        buf[n++] = 'u';
                        buf[n++] = HEX[c >> 12 & 15];
                        buf[n++] = HEX[c >> 8 & 15];
                        buf[n++] = HEX[c >> 4 & 15];
                        buf[n++] = HEX[c & 15];
                    }
                }
                start = j + 1;
            }
            room(rest - start);
            System.arraycopy(tail, start, buf, n, rest - start);
            n += rest - start;
        }
    }
}

package io.auditpipe.flink.stream;

import io.auditpipe.parser.JsonEscape;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.Date;
import java.util.List;
import java.util.Map;

/**
 * JSON of the values a stream message holds (maps, lists, strings, numbers, booleans, dates as
 * ISO-8601 in UTC, null), written directly as UTF-8 bytes: the BSON library's writer goes through
 * its codec registry for every value (about 15 us for a small event, measured 2026-11-29). A string
 * is read a character at a time and each one written as its bytes where it lies: ASCII that needs
 * no escape (nearly all of an audit record) one byte each, in a loop of its own, and the rest
 * (escapes, multi-byte characters) in a second; no char buffer, no runs copied between escapes, no
 * second pass to encode. The writer's frames were a seventh of the job alone's samples in a profile
 * of 2026-12-02. An unpaired surrogate is written as '?', as {@link String#getBytes} does.
 */
final class Json {
    private Json() {}

    /** {@code value} as JSON, UTF-8. */
    static byte[] utf8(Object value) {
        Writer w = new Writer();
        w.value(value);
        return Arrays.copyOf(w.buf, w.n);
    }

    /** {@code value} as JSON. */
    static String write(Object value) {
        return new String(utf8(value), StandardCharsets.UTF_8);
    }

    private static final class Writer {
        private byte[] buf = new byte[2048];
        private int n;

        private void room(int more) {
            if (n + more > buf.length) buf = Arrays.copyOf(buf, Math.max(buf.length * 2, n + more));
        }

        /** ASCII text of the writer's own (numbers, literals, dates). */
        private void raw(String s) {
            int len = s.length();
            room(len);
            for (int i = 0; i < len; i++) buf[n++] = (byte) s.charAt(i);
        }

        private void ch(char c) {
            room(1);
            buf[n++] = (byte) c;
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
            } else if (v instanceof Integer
                    || v instanceof Long
                    || v instanceof Short
                    || v instanceof Byte) {
                raw(Long.toString(((Number) v).longValue()));
            } else if (v instanceof Number num) {
                double d = num.doubleValue();
                raw(Double.isFinite(d) ? Double.toString(d) : "null");
            } else if (v instanceof Boolean bool) {
                raw(bool ? "true" : "false");
            } else if (v instanceof Date date) {
                string(
                        Instant.ofEpochMilli(date.getTime())
                                .toString()); // schemas/audit-event.schema.json's date-time
            } else {
                string(String.valueOf(v)); // nothing else reaches a message
            }
        }

        void string(String s) {
            int len = s.length();
            room(len + 2);
            byte[] b = buf;
            int at = n;
            b[at++] = '"';
            int i = 0;
            // ASCII with nothing to escape: one byte a character (room for len was made above)
            for (; i < len; i++) {
                char c = s.charAt(i);
                if (c >= 0x80 || c < 0x20 || c == '"' || c == '\\') break;
                b[at++] = (byte) c;
            }
            n = at;
            if (i < len) rest(s, i, len);
            room(1);
            buf[n++] = '"';
        }

        /** The characters of {@code s} from {@code i} on, escaped as JSON wants, as UTF-8. */
        private void rest(String s, int i, int len) {
            for (; i < len; i++) {
                char c = s.charAt(i);
                room(6);
                byte[] b = buf;
                if (c < 0x80) {
                    if (JsonEscape.needed(c)) n = JsonEscape.write(c, b, n);
                    else b[n++] = (byte) c;
                } else if (c < 0x800) {
                    b[n++] = (byte) (0xC0 | c >> 6);
                    b[n++] = (byte) (0x80 | c & 0x3F);
                } else if (c == 0x2028
                        || c == 0x2029) { // valid JSON, but not inside a JavaScript string
                    n = JsonEscape.unicode(c, b, n);
                } else if (Character.isSurrogate(c)) {
                    if (Character.isHighSurrogate(c)
                            && i + 1 < len
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        int cp = Character.toCodePoint(c, s.charAt(++i));
                        b[n++] = (byte) (0xF0 | cp >> 18);
                        b[n++] = (byte) (0x80 | cp >> 12 & 0x3F);
                        b[n++] = (byte) (0x80 | cp >> 6 & 0x3F);
                        b[n++] = (byte) (0x80 | cp & 0x3F);
                    } else {
                        b[n++] = '?';
                    }
                } else {
                    b[n++] = (byte) (0xE0 | c >> 12);
                    b[n++] = (byte) (0x80 | c >> 6 & 0x3F);
                    b[n++] = (byte) (0x80 | c & 0x3F);
                }
            }
        }
    }
}

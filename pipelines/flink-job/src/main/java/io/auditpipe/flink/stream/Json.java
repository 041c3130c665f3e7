package io.auditpipe.flink.stream;

import java.util.List;
import java.util.Map;

/**
 * JSON of the values a stream message holds (maps, lists, strings, numbers, booleans, null), written
 * directly: the BSON library's writer goes through its codec registry for every value and took
 * about 15 us for a small event (measured 2026-11-29), most of what a message cost.
 */
final class Json {
    private Json() {}

    static String write(Object value) {
        StringBuilder b = new StringBuilder(512);
        write(b, value);
        return b.toString();
    }

    private static void write(StringBuilder b, Object v) {
        if (v == null) {
            b.append("null");
        } else if (v instanceof String s) {
            string(b, s);
        } else if (v instanceof Map<?, ?> m) {
            b.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) b.append(',');
                first = false;
                string(b, String.valueOf(e.getKey()));
                b.append(':');
                write(b, e.getValue());
            }
            b.append('}');
        } else if (v instanceof List<?> l) {
            b.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) b.append(',');
                write(b, l.get(i));
            }
            b.append(']');
        } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            b.append(((Number) v).longValue());
        } else if (v instanceof Number n) {
            double d = n.doubleValue();
            if (Double.isFinite(d)) b.append(d); else b.append("null");
        } else if (v instanceof Boolean bool) {
            b.append(bool.booleanValue());
        } else {
            string(b, String.valueOf(v)); // nothing else reaches a message (dates are ISO strings by then)
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private static void string(StringBuilder b, String s) {
        b.append('"');
        int start = 0;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c != '"' && c != '\\' && c != 0x2028 && c != 0x2029) continue;
            b.append(s, start, i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> b.append("\\u").append(HEX[c >> 12 & 15]).append(HEX[c >> 8 & 15])
                        .append(HEX[c >> 4 & 15]).append(HEX[c & 15]);
            }
            start = i + 1;
        }
        b.append(s, start, s.length()).append('"');
    }
}

package io.auditpipe.flink.document;

import io.auditpipe.parser.ByteScan;
import io.auditpipe.parser.JsonEscape;
import java.nio.charset.StandardCharsets;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.bson.Document;

/**
 * The canonical form of an event document: what its chain link's digest covers (docs/archive.md).
 * It is the stored document without the two chain fields, as JSON with object keys sorted, no
 * whitespace, times as integer milliseconds since the epoch, and strings escaped as Python's {@code
 * json.dumps(..., ensure_ascii=False)} escapes them, so that {@code auditpipe verify}
 * (cli/auditpipe/evidence/chain.py) recomputes the same bytes from a document read back from the
 * store or a row of the archive. This class is the one definition on the job's side; the Python
 * side is tested against it (EventChainTest's vectors are in tests/unit/test_chain.py).
 *
 * <p>Written into a growing UTF-8 buffer that an instance keeps (one per operator instance; not
 * thread-safe). The writer is on the chain's hot path, so: the sorted order of an object's keys is
 * remembered per shape (the keys in the map's own order; a server's events come in a few shapes,
 * {@link EventDocument#of}), with each key already written; a short string is written a char at a
 * time while it is plain ASCII; a longer one is encoded by the JDK (an intrinsic for ASCII) and
 * copied up to the first byte to escape, found eight bytes at a time (ByteScan). EventChainTest and
 * CanonicalFormPropertyTest compare it with a plain writer of the same form.
 */
public final class CanonicalForm {
    /**
     * Shapes remembered at most; past it the memory starts again (a document of ever new keys stays
     * correct, only slower).
     */
    static final int MAX_SHAPES = 256;

    /**
     * Strings up to this long are written a char at a time while plain ASCII (no encoding, no
     * copy).
     */
    static final int SHORT_STRING = 32;

    private byte[] buf = new byte[4096];
    private int len;
    private final Map<Integer, KeyOrder> orders = new HashMap<>();

    /** The canonical content of an event document as text. */
    public static String of(Document event) {
        CanonicalForm c = new CanonicalForm();
        c.writeDocument(event);
        return new String(c.buf, 0, c.len, StandardCharsets.UTF_8);
    }

    /**
     * Writes {@code event}'s canonical form into this instance's buffer, replacing what it held.
     */
    public void writeDocument(Map<?, ?> event) {
        len = 0;
        writeObject(event, true);
    }

    /** The buffer holding the last written form: its first {@link #length()} bytes. */
    public byte[] buffer() {
        return buf;
    }

    /** How many bytes of {@link #buffer()} the last written form takes. */
    public int length() {
        return len;
    }

    private void ensure(long more) {
        if (len + more > buf.length) {
            buf =
                    java.util.Arrays.copyOf(
                            buf,
                            (int)
                                    Math.min(
                                            Integer.MAX_VALUE - 8,
                                            Math.max(buf.length * 2L, len + more)));
        }
    }

    private void ascii(String s) {
        ensure(s.length());
        for (int i = 0, n = s.length(); i < n; i++) buf[len++] = (byte) s.charAt(i);
    }

    private void write(Object v) {
        if (v == null) {
            ascii("null");
        } else if (v instanceof String s) {
            writeString(s);
        } else if (v instanceof Integer
                || v instanceof Long
                || v instanceof Short
                || v instanceof Byte) {
            writeLong(((Number) v).longValue());
        } else if (v instanceof Boolean b) {
            ascii(b ? "true" : "false");
        } else if (v instanceof Date d) {
            writeLong(d.getTime());
        } else if (v instanceof Map<?, ?> m) {
            writeObject(m, false);
        } else if (v instanceof List<?> l) {
            ensure(1);
            buf[len++] = '[';
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    ensure(1);
                    buf[len++] = ',';
                }
                write(l.get(i));
            }
            ensure(1);
            buf[len++] = ']';
        } else {
            // the event document holds only the types above (EventDocument.of); anything else
            // would make a digest the verifier cannot recompute, so it must not pass silently
            throw new IllegalArgumentException("no canonical form for " + v.getClass().getName());
        }
    }

    /** A number as Long.toString writes it, without making the String. */
    private void writeLong(long v) {
        if (v == Long.MIN_VALUE) {
            ascii(Long.toString(v));
            return;
        }
        ensure(20);
        if (v < 0) {
            buf[len++] = '-';
            v = -v;
        }
        int digits = 1;
        for (long x = v; x >= 10; x /= 10) digits++;
        for (int at = len + digits - 1; at >= len; at--) {
            buf[at] = (byte) ('0' + v % 10);
            v /= 10;
        }
        len += digits;
    }

    private void writeObject(Map<?, ?> m, boolean skipChainFields) {
        String[] keys = new String[m.size()];
        Object[] values = new Object[keys.length];
        int n = 0;
        int shape = 1;
        for (Map.Entry<?, ?> e : m.entrySet()) {
            String key = (String) e.getKey();
            if (skipChainFields && EventDocument.CHAIN_FIELDS.contains(key)) continue;
            keys[n] = key;
            values[n++] = e.getValue();
            shape = 31 * shape + key.hashCode();
        }
        KeyOrder o = keyOrder(keys, n, shape);
        ensure(1);
        buf[len++] = '{';
        for (int i = 0; i < n; i++) {
            byte[] key = o.written[i]; // a comma (but the first), the key as a JSON string, a colon
            ensure(key.length);
            System.arraycopy(key, 0, buf, len, key.length);
            len += key.length;
            write(values[o.order[i]]);
        }
        ensure(1);
        buf[len++] = '}';
    }

    /**
     * The shape of {@code keys[0..n)}: their sorted positions and how each is written, remembered.
     */
    private KeyOrder keyOrder(String[] keys, int n, int shape) {
        KeyOrder first = orders.get(shape);
        for (KeyOrder o = first; o != null; o = o.next) {
            if (o.matches(keys, n)) return o;
        }
        Integer[] positions = new Integer[n];
        for (int i = 0; i < n; i++) positions[i] = i;
        // UTF-16 order; Python sorts by code point: the same for keys without surrogates
        java.util.Arrays.sort(positions, (a, b) -> keys[a].compareTo(keys[b]));
        int[] order = new int[n];
        byte[][] written = new byte[n][];
        for (int i = 0; i < n; i++) {
            order[i] = positions[i];
            CanonicalForm key = new CanonicalForm();
            if (i > 0) key.buf[key.len++] = ',';
            key.writeString(keys[order[i]]);
            key.ensure(1);
            key.buf[key.len++] = ':';
            written[i] = java.util.Arrays.copyOf(key.buf, key.len);
        }
        if (orders.size() >= MAX_SHAPES) {
            orders.clear();
            first = null;
        }
        KeyOrder o = new KeyOrder(java.util.Arrays.copyOf(keys, n), order, written, first);
        orders.put(shape, o);
        return o;
    }

    /**
     * A JSON string as Python's json.dumps(ensure_ascii=False) writes it, in UTF-8: only the quote,
     * the backslash and control characters are escaped. A lone surrogate becomes '?', as Java's own
     * UTF-8 encoder makes it (it is the encoder: the escaping works on its bytes, and no byte of a
     * multi-byte sequence is below 0x80).
     */
    private void writeString(String s) {
        int chars = s.length();
        if (chars <= SHORT_STRING) {
            ensure(chars + 2L);
            byte[] b = buf;
            int at = len;
            b[at++] = '"';
            for (int i = 0; i < chars; i++) {
                char c = s.charAt(i);
                if (c >= 0x80 || c < 0x20 || c == '"' || c == '\\') {
                    writeEncoded(s); // not all plain ASCII: the general way, from the start
                    return;
                }
                b[at++] = (byte) c;
            }
            b[at++] = '"';
            len = at;
            return;
        }
        writeEncoded(s);
    }

    /**
     * Any string: encoded by the JDK, copied up to the first byte to escape, the rest byte by byte.
     */
    private void writeEncoded(String s) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        int n = u.length;
        int plain = plainPrefix(u);
        ensure(
                plain == n
                        ? n + 2L
                        : plain + 6L * (n - plain) + 2); // an escaped control character: 6 bytes
        byte[] b = buf;
        int at = len;
        b[at++] = '"';
        System.arraycopy(u, 0, b, at, plain);
        at += plain;
        for (int i = plain; i < n; i++) {
            byte c = u[i];
            if (c < 0 || !JsonEscape.needed(c)) {
                b[at++] = c;
                continue;
            }
            at = JsonEscape.write(c, b, at);
        }
        b[at++] = '"';
        len = at;
    }

    /**
     * How many bytes from the start need no escaping (a control character, a quote or a backslash
     * does).
     */
    static int plainPrefix(byte[] u) {
        int i = 0;
        int n = u.length;
        for (; i + 8 <= n; i += 8) {
            long w = ByteScan.wordAt(u, i);
            if (ByteScan.anyByteBelow(w, 0x20)
                    || ByteScan.anyByteIs(w, '"')
                    || ByteScan.anyByteIs(w, '\\')) break;
        }
        for (; i < n; i++) {
            byte c = u[i];
            if ((c >= 0 && c < 0x20) || c == '"' || c == '\\') return i;
        }
        return n;
    }

    /** A remembered shape: its keys in the map's own order and their sorted positions. */
    private record KeyOrder(String[] keys, int[] order, byte[][] written, KeyOrder next) {
        boolean matches(String[] other, int n) {
            if (keys.length != n) return false;
            for (int i = 0; i < n; i++) {
                if (!keys[i].equals(other[i]))
                    return false; // the same literal: equals answers at ==
            }
            return true;
        }
    }
}

package io.auditpipe.flink.chain;

import org.bson.Document;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The tamper-evidence chain (docs/archive.md): per server, every stored event carries
 * {@code chain_seq} (1, 2, 3, ... in the order the job received the server's records) and
 * {@code chain_digest} = SHA-256 of (previous digest in hex, a newline, the event's canonical
 * content). The first link's previous digest is the empty string.
 *
 * <p>The canonical content is the stored document without the two chain fields, as JSON with
 * object keys sorted, no whitespace, times as integer milliseconds since the epoch, and strings
 * escaped as Python's {@code json.dumps(..., ensure_ascii=False)} escapes them, so that
 * {@code auditpipe verify} (cli/auditpipe/chain.py) recomputes the same bytes from a document read
 * back from the store or a row of the archive. This class is the one definition on the job's side;
 * the Python side is tested against it (EventChainTest's vectors are in tests/unit/test_chain.py).
 */
public final class EventChain {
    private EventChain() {}

    public static final String SEQ_FIELD = "chain_seq";
    public static final String DIGEST_FIELD = "chain_digest";
    public static final Set<String> CHAIN_FIELDS = Set.of(SEQ_FIELD, DIGEST_FIELD);

    /** The digest of the link after {@code previousDigest} ("" for the first) for this document. */
    public static String link(String previousDigest, Document event) {
        return new Linker().link(previousDigest, event);
    }

    /** The canonical content of an event document: what its link's digest covers. */
    public static String canonical(Document event) {
        Canonical c = new Canonical();
        c.writeObject(event, true);
        return new String(c.buf, 0, c.len, StandardCharsets.UTF_8);
    }

    /**
     * Links one event after another with a digest and a buffer it keeps (one per operator instance;
     * not thread-safe). The canonical form is written straight into UTF-8 bytes and hashed from
     * there: through a StringBuilder, a String and its UTF-8 copy, building it was a fifth of the
     * job's busiest thread in a profile (bench/README.md).
     */
    public static final class Linker {
        private final MessageDigest sha = sha256();
        private final Canonical canonical = new Canonical();

        public String link(String previousDigest, Document event) {
            canonical.len = 0;
            canonical.writeObject(event, true);
            sha.reset();
            sha.update(previousDigest.getBytes(StandardCharsets.US_ASCII));
            sha.update((byte) '\n');
            sha.update(canonical.buf, 0, canonical.len);
            return HexFormat.of().formatHex(sha.digest());
        }
    }

    /** The canonical JSON writer, into a growing UTF-8 buffer. */
    static final class Canonical {
        byte[] buf = new byte[4096];
        int len;

        private void ensure(long more) {
            if (len + more > buf.length) {
                buf = java.util.Arrays.copyOf(buf, (int) Math.min(Integer.MAX_VALUE - 8, Math.max(buf.length * 2L, len + more)));
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
            } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
                ascii(Long.toString(((Number) v).longValue()));
            } else if (v instanceof Boolean b) {
                ascii(b ? "true" : "false");
            } else if (v instanceof Date d) {
                ascii(Long.toString(d.getTime()));
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
                // the event document holds only the types above (StoreDocuments.event); anything else
                // would make a digest the verifier cannot recompute, so it must not pass silently
                throw new IllegalArgumentException("no canonical form for " + v.getClass().getName());
            }
        }

        void writeObject(Map<?, ?> m, boolean skipChainFields) {
            List<String> keys = new ArrayList<>(m.size());
            for (Object k : m.keySet()) {
                String key = (String) k;
                if (!(skipChainFields && CHAIN_FIELDS.contains(key))) keys.add(key);
            }
            Collections.sort(keys); // UTF-16 order; Python sorts by code point: the same for keys without surrogates
            ensure(1);
            buf[len++] = '{';
            boolean first = true;
            for (String k : keys) {
                if (!first) {
                    ensure(1);
                    buf[len++] = ',';
                }
                first = false;
                writeString(k);
                ensure(1);
                buf[len++] = ':';
                write(m.get(k));
            }
            ensure(1);
            buf[len++] = '}';
        }

        /**
         * A JSON string as Python's json.dumps(ensure_ascii=False) writes it, in UTF-8: only the
         * quote, the backslash and control characters are escaped. A lone surrogate becomes '?', as
         * Java's own UTF-8 encoder makes it.
         */
        private void writeString(String s) {
            int n = s.length();
            ensure(6L * n + 2); // the most one char can take: an escaped control character, 6 bytes
            byte[] b = buf;
            int at = len;
            b[at++] = '"';
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                if (c < 0x80) {
                    if (c >= 0x20 && c != '"' && c != '\\') {
                        b[at++] = (byte) c;
                        continue;
                    }
                    b[at++] = '\\';
                    switch (c) {
                        case '"' -> b[at++] = '"';
                        case '\\' -> b[at++] = '\\';
                        case '\n' -> b[at++] = 'n';
                        case '\r' -> b[at++] = 'r';
                        case '\t' -> b[at++] = 't';
                        case '\b' -> b[at++] = 'b';
                        case '\f' -> b[at++] = 'f';
                        default -> {
                            b[at++] = 'u';
                            b[at++] = '0';
                            b[at++] = '0';
                            b[at++] = (byte) HEX[c >> 4];
                            b[at++] = (byte) HEX[c & 0xF];
                        }
                    }
                } else if (c < 0x800) {
                    b[at++] = (byte) (0xC0 | (c >> 6));
                    b[at++] = (byte) (0x80 | (c & 0x3F));
                } else if (!Character.isSurrogate(c)) {
                    b[at++] = (byte) (0xE0 | (c >> 12));
                    b[at++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                    b[at++] = (byte) (0x80 | (c & 0x3F));
                } else if (Character.isHighSurrogate(c) && i + 1 < n && Character.isLowSurrogate(s.charAt(i + 1))) {
                    int cp = Character.toCodePoint(c, s.charAt(++i));
                    b[at++] = (byte) (0xF0 | (cp >> 18));
                    b[at++] = (byte) (0x80 | ((cp >> 12) & 0x3F));
                    b[at++] = (byte) (0x80 | ((cp >> 6) & 0x3F));
                    b[at++] = (byte) (0x80 | (cp & 0x3F));
                } else {
                    b[at++] = '?';
                }
            }
            b[at++] = '"';
            len = at;
        }
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

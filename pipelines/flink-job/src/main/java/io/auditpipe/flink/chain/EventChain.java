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
        MessageDigest sha = sha256();
        sha.update(previousDigest.getBytes(StandardCharsets.US_ASCII));
        sha.update((byte) '\n');
        sha.update(canonical(event).getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(sha.digest());
    }

    /** The canonical content of an event document: what its link's digest covers. */
    public static String canonical(Document event) {
        StringBuilder out = new StringBuilder(2048); // an enriched event's canonical form is 1-2 KB
        writeObject(event, out, true);
        return out.toString();
    }

    private static void write(Object v, StringBuilder out) {
        if (v == null) {
            out.append("null");
        } else if (v instanceof String s) {
            writeString(s, out);
        } else if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
            out.append(((Number) v).longValue());
        } else if (v instanceof Boolean b) {
            out.append(b ? "true" : "false");
        } else if (v instanceof Date d) {
            out.append(d.getTime());
        } else if (v instanceof Map<?, ?> m) {
            writeObject(m, out, false);
        } else if (v instanceof List<?> l) {
            out.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) out.append(',');
                write(l.get(i), out);
            }
            out.append(']');
        } else {
            // the event document holds only the types above (StoreDocuments.event); anything else
            // would make a digest the verifier cannot recompute, so it must not pass silently
            throw new IllegalArgumentException("no canonical form for " + v.getClass().getName());
        }
    }

    private static void writeObject(Map<?, ?> m, StringBuilder out, boolean skipChainFields) {
        List<String> keys = new ArrayList<>(m.size());
        for (Object k : m.keySet()) {
            String key = (String) k;
            if (!(skipChainFields && CHAIN_FIELDS.contains(key))) keys.add(key);
        }
        Collections.sort(keys); // UTF-16 order; Python sorts by code point: the same for keys without surrogates
        out.append('{');
        boolean first = true;
        for (String k : keys) {
            if (!first) out.append(',');
            first = false;
            writeString(k, out);
            out.append(':');
            write(m.get(k), out);
        }
        out.append('}');
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /**
     * A JSON string as Python's json.dumps(ensure_ascii=False) writes it. The runs between
     * characters that need escaping are appended whole (most strings have none): char by char, this
     * was the chain's largest cost in a profile of the job (bench/README.md).
     */
    private static void writeString(String s, StringBuilder out) {
        out.append('"');
        int run = 0;
        for (int i = 0, n = s.length(); i < n; i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c != '"' && c != '\\') {
                continue;
            }
            out.append(s, run, i);
            run = i + 1;
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> out.append("\\u00").append(HEX[c >> 4]).append(HEX[c & 0xF]);
            }
        }
        out.append(s, run, s.length());
        out.append('"');
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}

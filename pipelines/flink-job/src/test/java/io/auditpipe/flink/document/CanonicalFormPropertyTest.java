package io.auditpipe.flink.document;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.chain.EventChain;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.bson.Document;

/**
 * The canonical form's writer (its strings copied whole unless a byte needs escaping, its key
 * orders remembered per shape) against a plain writer of the form its header defines: keys sorted
 * each time, every char looked at. One Linker over many documents, so that remembered shapes are
 * reused, including maps with the same keys in another order and shapes past the memory's bound.
 */
class CanonicalFormPropertyTest {
    private static final List<String> KEYS =
            List.of(
                    "_id",
                    "server",
                    "event_time",
                    "sqltext",
                    "user",
                    "a",
                    "b",
                    "Ab",
                    "aB",
                    "z",
                    "ingest",
                    "extra",
                    "chain_seq",
                    "chain_digest",
                    "é",
                    "key\"q",
                    "k\\b",
                    "k\u0001",
                    "B",
                    "Aa",
                    "BB"); // "Aa" and "BB" have the same hashCode: shapes that collide

    @Property(tries = 300)
    void theCanonicalFormIsThePlainOne(@ForAll("documentLists") List<Document> documents) {
        EventChain.Linker linker = new EventChain.Linker();
        CanonicalForm canonical = new CanonicalForm();
        String previous = "";
        for (Document d : documents) {
            String expected = plain(d, true);
            canonical.writeDocument(d);
            assertEquals(
                    expected,
                    new String(canonical.buffer(), 0, canonical.length(), StandardCharsets.UTF_8));
            assertEquals(expected, CanonicalForm.of(d));
            assertEquals(digest(previous, expected), linker.link(previous, d));
            previous = digest(previous, expected);
        }
    }

    @Example
    void shapesWithTheSameHashAreToldApart() {
        assertEquals("Aa".hashCode(), "BB".hashCode());
        CanonicalForm canonical = new CanonicalForm();
        for (Document d :
                List.of(
                        new Document("B", 1).append("Aa", 2),
                        new Document("B", 1).append("BB", 2))) {
            canonical.writeDocument(d); // no chain fields in these: written whole
            assertEquals(
                    plain(d, false),
                    new String(canonical.buffer(), 0, canonical.length(), StandardCharsets.UTF_8));
        }
    }

    @Property(tries = 2000)
    void plainPrefixStopsAtTheFirstByteToEscape(@ForAll("strings") String s) {
        byte[] u = s.getBytes(StandardCharsets.UTF_8);
        int expected = u.length;
        for (int i = 0; i < u.length; i++) {
            if ((u[i] >= 0 && u[i] < 0x20) || u[i] == '"' || u[i] == '\\') {
                expected = i;
                break;
            }
        }
        assertEquals(expected, CanonicalForm.plainPrefix(u));
    }

    @Provide
    Arbitrary<List<Document>> documentLists() {
        return document(2).list().ofMinSize(1).ofMaxSize(CanonicalForm.MAX_SHAPES / 20);
    }

    @Provide
    Arbitrary<String> strings() {
        return text();
    }

    /**
     * Strings mostly plain, with some of everything that is escaped or multi-byte, and lone
     * surrogates.
     */
    private static Arbitrary<String> text() {
        Arbitrary<Character> chars =
                Arbitraries.frequencyOf(
                        net.jqwik.api.Tuple.of(30, Arbitraries.chars().range(' ', '~')),
                        net.jqwik.api.Tuple.of(
                                2,
                                Arbitraries.of(
                                        '"', '\\', '\n', '\t', '\r', '\b', '\f', '\u0000', '\u001f',
                                        '\u007f')),
                        net.jqwik.api.Tuple.of(
                                2,
                                Arbitraries.of('é', '✓', '\u0080', '\u07ff', '\u0800', '\uffff')),
                        net.jqwik.api.Tuple.of(1, Arbitraries.chars().range('\ud800', '\udfff')));
        return Arbitraries.oneOf(
                chars.list().ofMaxSize(40).map(CanonicalFormPropertyTest::join),
                chars.list().ofMinSize(100).ofMaxSize(400).map(CanonicalFormPropertyTest::join),
                Arbitraries.of("𝄞 x", "a\ud834b\udd1ec", ""));
    }

    private static String join(List<Character> cs) {
        StringBuilder b = new StringBuilder(cs.size());
        cs.forEach(b::append);
        return b.toString();
    }

    private static Arbitrary<Document> document(int depth) {
        Arbitrary<Object> scalar =
                Arbitraries.oneOf(
                        text().map(s -> (Object) s),
                        Arbitraries.longs().map(l -> (Object) l),
                        Arbitraries.integers().map(i -> (Object) i),
                        Arbitraries.of(true, false).map(b -> (Object) b),
                        Arbitraries.longs().map(l -> (Object) new Date(l)),
                        Arbitraries.just(null),
                        text().list().ofMaxSize(3).map(l -> (Object) l));
        Arbitrary<Object> value =
                depth == 0
                        ? scalar
                        : Arbitraries.frequencyOf(
                                net.jqwik.api.Tuple.of(6, scalar),
                                net.jqwik.api.Tuple.of(
                                        1,
                                        Arbitraries.lazy(() -> document(depth - 1))
                                                .map(d -> (Object) d)));
        // few keys, so that shapes repeat (and the same keys come in other orders)
        Arbitrary<List<String>> keys = Arbitraries.of(KEYS).list().uniqueElements().ofMaxSize(8);
        return keys.flatMap(
                ks ->
                        value.list()
                                .ofSize(ks.size())
                                .map(
                                        vs -> {
                                            Document d = new Document();
                                            for (int i = 0; i < ks.size(); i++)
                                                d.append(ks.get(i), vs.get(i));
                                            return d;
                                        }));
    }

    private static String digest(String previous, String canonical) {
        try {
            java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
            sha.update((previous + "\n").getBytes(StandardCharsets.US_ASCII));
            sha.update(canonical.getBytes(StandardCharsets.UTF_8));
            return java.util.HexFormat.of().formatHex(sha.digest());
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The form as the header states it, written the plain way. */
    private static String plain(Object v, boolean top) {
        if (v == null) return "null";
        if (v instanceof String s) return plainString(s);
        if (v instanceof Integer || v instanceof Long)
            return Long.toString(((Number) v).longValue());
        if (v instanceof Boolean b) return b.toString();
        if (v instanceof Date d) return Long.toString(d.getTime());
        if (v instanceof List<?> l) {
            List<String> parts = new ArrayList<>();
            for (Object o : l) parts.add(plain(o, false));
            return "[" + String.join(",", parts) + "]";
        }
        Map<String, Object> sorted = new TreeMap<>();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
            if (!(top && EventDocument.CHAIN_FIELDS.contains((String) e.getKey())))
                sorted.put((String) e.getKey(), e.getValue());
        }
        List<String> parts = new ArrayList<>();
        sorted.forEach((k, o) -> parts.add(plainString(k) + ":" + plain(o, false)));
        return "{" + String.join(",", parts) + "}";
    }

    private static String plainString(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                default -> {
                    if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else if (Character.isHighSurrogate(c)
                            && i + 1 < s.length()
                            && Character.isLowSurrogate(s.charAt(i + 1))) {
                        b.append(c).append(s.charAt(++i));
                    } else if (Character.isSurrogate(c)) b.append('?');
                    else b.append(c);
                }
            }
        }
        return b.append('"').toString();
    }
}

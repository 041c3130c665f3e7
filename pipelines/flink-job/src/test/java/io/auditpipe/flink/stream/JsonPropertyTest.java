package io.auditpipe.flink.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Assume;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.bson.Document;

/**
 * The stream's JSON writer (ASCII written a byte at a time until a character needs more) against a
 * plain one: every char looked at, escaped as JSON wants, the text encoded by {@link
 * String#getBytes}. Strings of any chars: long ASCII runs, quotes, controls, multi-byte characters
 * and unpaired surrogates.
 */
class JsonPropertyTest {
    @Property(tries = 2000)
    void theWriterIsThePlainOne(
            @ForAll("strings") String key,
            @ForAll("strings") String value,
            @ForAll("strings") String item) {
        Assume.that(
                !key.equals("list")
                        && !key.equals("m")); // the two keys appended below would replace it
        Document d =
                new Document(key, value)
                        .append("list", List.of(item, 7L))
                        .append("m", new Document("v", value));
        String plain =
                "{"
                        + plain(key)
                        + ":"
                        + plain(value)
                        + ",\"list\":["
                        + plain(item)
                        + ",7],\"m\":{\"v\":"
                        + plain(value)
                        + "}}";
        assertArrayEquals(plain.getBytes(StandardCharsets.UTF_8), Json.utf8(d));
    }

    @Property(tries = 500)
    void whatBsonReadsBackIsTheDocument(@ForAll("strings") String value) {
        String wellFormed =
                new String(value.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8);
        Document d = new Document("s", wellFormed);
        assertEquals(d, Document.parse(Json.write(d)));
    }

    @Provide
    Arbitrary<String> strings() {
        Arbitrary<String> ascii = Arbitraries.strings().withCharRange(' ', '~').ofMaxLength(300);
        Arbitrary<String> any = Arbitraries.strings().all().ofMaxLength(40);
        Arbitrary<String> tricky =
                Arbitraries.of(
                                "\"",
                                "\\",
                                "\n",
                                "\u0000",
                                "\u001f",
                                "\u007f",
                                "é",
                                "✓",
                                "\u2028",
                                "\u2029",
                                "\ud834\udd1e",
                                "\ud834",
                                "\udd1e",
                                "</script>")
                        .list()
                        .ofMaxSize(12)
                        .map(l -> String.join("", l));
        return Arbitraries.oneOf(ascii, any, tricky, Arbitraries.strings().all().ofMaxLength(3000));
    }

    /** A JSON string the plain way. */
    private static String plain(String s) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029)
                        out.append(String.format("\\u%04x", (int) c));
                    else out.append(c);
                }
            }
        }
        return out.append('"').toString();
    }
}

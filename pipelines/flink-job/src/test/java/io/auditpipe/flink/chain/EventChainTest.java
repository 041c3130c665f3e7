package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.auditpipe.flink.document.CanonicalForm;
import java.util.Date;
import java.util.List;
import org.bson.Document;
import org.junit.jupiter.api.Test;

/**
 * The canonical form and link digests. The same vectors are in tests/unit/test_chain.py: the
 * verifier (Python) must compute exactly these bytes, or every event would look edited.
 */
public class EventChainTest {
    /** The vector: a stored event with every kind of value a document holds. */
    public static Document vector() {
        return new Document("_id", "db-01/1_2026-11-22T10:00:00")
                .append("server", "db-01")
                .append("event_time", new Date(1795860000123L))
                .append("status", 1045)
                .append("connection_id", 12345678901L)
                .append("sqltext", "SELECT \"x\"\\n\t\u0001 é ✓ 𝄞")
                .append("tables", List.of("shop.cards", "shop.orders"))
                .append("extra", new Document("z", "1").append("a", "2"))
                .append("event_time_trusted", false)
                .append(
                        "ingest",
                        new Document("topic", "audit.raw")
                                .append("partition", 0)
                                .append("offset", 7L)
                                .append("timestamp", new Date(1795860001000L)))
                .append("chain_seq", 9L)
                .append("chain_digest", "ignored");
    }

    @Test
    void canonicalFormIsSortedCompactJsonWithoutTheChainFields() {
        assertEquals(
                "{\"_id\":\"db-01/1_2026-11-22T10:00:00\",\"connection_id\":12345678901,\"event_time\":1795860000123,"
                        + "\"event_time_trusted\":false,\"extra\":{\"a\":\"2\",\"z\":\"1\"},\"ingest\":{\"offset\":7,\"partition\":0,"
                        + "\"timestamp\":1795860001000,\"topic\":\"audit.raw\"},\"server\":\"db-01\","
                        + "\"sqltext\":\"SELECT \\\"x\\\"\\\\n\\t\\u0001 é ✓ 𝄞\",\"status\":1045,"
                        + "\"tables\":[\"shop.cards\",\"shop.orders\"]}",
                CanonicalForm.of(vector()));
    }

    @Test
    void linkDigestsMatchTheVerifiersVectors() {
        String first = EventChain.link("", vector());
        assertEquals("2360ea144295777db0366420633febcc8d745d532dec04b3153e0c1c26c8457e", first);
        assertEquals(
                "fabb91cf8fbe4d2f9f8744f60377f4dffb41af5d79cd9916416cb63c4acccf1f",
                EventChain.link(first, vector()));
    }

    @Test
    void aLinkerReusedOverEventsOfEverySizeGivesTheSameDigestsAsANewOne() {
        EventChain.Linker linker = new EventChain.Linker();
        String previous = "";
        for (int i = 0; i < 50; i++) {
            Document d =
                    vector().append("original", "x\"".repeat(i * 400))
                            .append("n", i); // past the first buffer
            String expected = EventChain.link(previous, d);
            assertEquals(expected, linker.link(previous, d), "event " + i);
            previous = expected;
        }
        assertEquals(
                EventChain.link("", vector()),
                linker.link("", vector()),
                "and small again after large ones");
    }

    @Test
    void aLoneSurrogateIsWrittenAsJavasOwnUtf8EncoderWritesIt() {
        Document d = new Document("s", "a\ud834b\udd1ec");
        assertEquals("{\"s\":\"a?b?c\"}", CanonicalForm.of(d));
        assertEquals(
                new String(
                        "{\"s\":\"a\ud834b\udd1ec\"}"
                                .getBytes(java.nio.charset.StandardCharsets.UTF_8),
                        java.nio.charset.StandardCharsets.UTF_8),
                CanonicalForm.of(d));
    }
}

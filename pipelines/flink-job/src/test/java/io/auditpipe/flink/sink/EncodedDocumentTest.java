package io.auditpipe.flink.sink;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.mongodb.MongoClientSettings;
import io.auditpipe.flink.chain.EventChainTest;
import java.util.List;
import org.bson.BsonBinaryWriter;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;

/**
 * What the store writer's registry writes for an EncodedDocument is what the driver writes for the
 * document.
 */
class EncodedDocumentTest {
    private static final EncoderContext AS_INSERTED =
            EncoderContext.builder().isEncodingCollectibleDocument(true).build();

    /** The chain's test vector, its id not first: the driver writes it first, and so must this. */
    static Document event() {
        Document d = new Document("server", "db-01");
        d.putAll(EventChainTest.vector());
        return d.append("nothing", null);
    }

    private static byte[] written(Codec<Document> codec, Document d) {
        BasicOutputBuffer out = new BasicOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            codec.encode(writer, d, AS_INSERTED);
        }
        return out.toByteArray();
    }

    @Test
    void theBytesAreTheDriversAndTheRegistryWritesThem() {
        byte[] drivers =
                written(MongoClientSettings.getDefaultCodecRegistry().get(Document.class), event());
        EncodedDocument encoded = (EncodedDocument) EncodedDocument.of(event());
        assertArrayEquals(drivers, encoded.bson());
        Codec<Document> writers = EncodedDocument.codecRegistry().get(Document.class);
        assertArrayEquals(drivers, written(writers, encoded), "piped");
        assertArrayEquals(
                drivers, written(writers, event()), "a plain document: encoded as the driver does");
        assertEquals(event(), new Document(encoded)); // Document.equals wants the same class
        assertEquals(
                "db-01/1_2026-11-22T10:00:00",
                writers instanceof org.bson.codecs.CollectibleCodec<Document> c
                        ? c.getDocumentId(encoded).asString().getValue()
                        : null);
    }

    @Test
    void otherShapesAreTheDriversToo() {
        Codec<Document> drivers = MongoClientSettings.getDefaultCodecRegistry().get(Document.class);
        List<Document> shapes =
                List.of(
                        new Document("a", 1).append("_id", null), // a null id, still written first
                        new Document(
                                "a",
                                List.of(
                                        List.of("x", 2),
                                        new Document("_id", 1)
                                                .append("b", true))), // nested: in order
                        new Document("_id", 1)
                                .append(
                                        "n",
                                        new java.util.LinkedHashMap<>(
                                                java.util.Map.of("k", 5L))), // a plain map
                        new Document("_id", new org.bson.types.ObjectId())
                                .append(
                                        "d",
                                        new java.math.BigDecimal("1.5")), // the driver's codecs
                        new Document("_id", "é")
                                .append("s", "a\ud834b")
                                .append("t", "𝄞 ✓ \u0000 end"), // not ASCII: the buffer's own way
                        new Document());
        for (Document d : shapes) {
            assertArrayEquals(
                    written(drivers, d),
                    ((EncodedDocument) EncodedDocument.of(d)).bson(),
                    d.toString());
        }
    }

    @Test
    // for the writer to find and make a dead letter
    void aDocumentThatCannotBeEncodedStaysAsItIs() {
        Document bad = new Document("_id", 1).append("a\u0000b", "a field name with a NUL");
        assertEquals(Document.class, EncodedDocument.of(bad).getClass());
        assertThrows(
                org.bson.BSONException.class,
                () ->
                        written(
                                MongoClientSettings.getDefaultCodecRegistry().get(Document.class),
                                bad));
    }

    @Test
    void itCannotChangeUnderItsBytes() {
        EncodedDocument encoded = (EncodedDocument) EncodedDocument.of(event());
        assertThrows(UnsupportedOperationException.class, () -> encoded.put("x", 1));
        assertThrows(UnsupportedOperationException.class, () -> encoded.append("x", 1));
        assertThrows(UnsupportedOperationException.class, () -> encoded.remove("server"));
        assertThrows(UnsupportedOperationException.class, encoded::clear);
        assertEquals(event(), new Document(encoded)); // Document.equals wants the same class
    }

    @Test
    void insideAnotherDocumentItIsWrittenAsItsMap() { // a rejected event's dead letter holds it
        Document dead =
                new Document("_id", "store:x")
                        .append(
                                "original",
                                new Document(
                                        "document", (EncodedDocument) EncodedDocument.of(event())));
        Document plain =
                new Document("_id", "store:x")
                        .append("original", new Document("document", event()));
        Codec<Document> writers = EncodedDocument.codecRegistry().get(Document.class);
        assertArrayEquals(written(writers, plain), written(writers, dead));
        assertEquals(plain.toJson(), dead.toJson());
    }
}

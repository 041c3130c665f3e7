package io.auditpipe.flink.sink;

import com.mongodb.MongoClientSettings;
import org.bson.BsonBinaryWriter;
import org.bson.Document;
import org.bson.codecs.Codec;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.junit.jupiter.api.Test;

import java.util.Date;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** What the store writer's registry writes for an EncodedDocument is what the driver writes for the document. */
class EncodedDocumentTest {
    private static final EncoderContext AS_INSERTED = EncoderContext.builder().isEncodingCollectibleDocument(true).build();

    static Document event() {
        return new Document("server", "db-01") // the id not first: the driver writes it first, and so must this
                .append("_id", "db-01/1_2026-11-22T10:00:00")
                .append("event_time", new Date(1795860000123L))
                .append("status", 1045)
                .append("connection_id", 12345678901L)
                .append("sqltext", "SELECT \"x\" é ✓ 𝄞")
                .append("tables", List.of("shop.cards", "shop.orders"))
                .append("extra", new Document("z", "1").append("a", "2"))
                .append("event_time_trusted", false)
                .append("nothing", null)
                .append("ingest", new Document("topic", "audit.raw").append("partition", 0).append("offset", 7L));
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
        byte[] drivers = written(MongoClientSettings.getDefaultCodecRegistry().get(Document.class), event());
        EncodedDocument encoded = new EncodedDocument(event());
        assertArrayEquals(drivers, encoded.bson());
        Codec<Document> writers = EncodedDocument.codecRegistry().get(Document.class);
        assertArrayEquals(drivers, written(writers, encoded), "piped");
        assertArrayEquals(drivers, written(writers, event()), "a plain document: encoded as the driver does");
        assertEquals(event(), new Document(encoded)); // Document.equals wants the same class
        assertEquals("db-01/1_2026-11-22T10:00:00", writers instanceof org.bson.codecs.CollectibleCodec<Document> c
                ? c.getDocumentId(encoded).asString().getValue() : null);
    }

    @Test
    void itCannotChangeUnderItsBytes() {
        EncodedDocument encoded = new EncodedDocument(event());
        assertThrows(UnsupportedOperationException.class, () -> encoded.put("x", 1));
        assertThrows(UnsupportedOperationException.class, () -> encoded.append("x", 1));
        assertThrows(UnsupportedOperationException.class, () -> encoded.remove("server"));
        assertThrows(UnsupportedOperationException.class, encoded::clear);
        assertEquals(event(), new Document(encoded)); // Document.equals wants the same class
    }

    @Test
    void insideAnotherDocumentItIsWrittenAsItsMap() { // a rejected event's dead letter holds it
        Document dead = new Document("_id", "store:x").append("original", new Document("document", new EncodedDocument(event())));
        Document plain = new Document("_id", "store:x").append("original", new Document("document", event()));
        Codec<Document> writers = EncodedDocument.codecRegistry().get(Document.class);
        assertArrayEquals(written(writers, plain), written(writers, dead));
        assertEquals(plain.toJson(), dead.toJson());
    }
}

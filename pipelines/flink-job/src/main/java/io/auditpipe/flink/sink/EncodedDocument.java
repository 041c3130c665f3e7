package io.auditpipe.flink.sink;

import com.mongodb.MongoClientSettings;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.bson.BsonBinaryReader;
import org.bson.BsonBinaryWriter;
import org.bson.BsonReader;
import org.bson.BsonValue;
import org.bson.BsonWriter;
import org.bson.Document;
import org.bson.codecs.CollectibleCodec;
import org.bson.codecs.DecoderContext;
import org.bson.codecs.EncoderContext;
import org.bson.codecs.configuration.CodecRegistries;
import org.bson.codecs.configuration.CodecRegistry;
import org.bson.io.BasicOutputBuffer;

/**
 * A store document with its BSON, encoded where the document is built (the task's thread, for
 * events: StoreDocuments.eventInsert), so that the thread writing a batch to the store only copies
 * bytes. The store waits while that thread encodes: left to the driver, encoding (codec lookups per
 * nested document, field names, strings) took about half of that thread's time with the store idle,
 * while the task's thread waited for the store most of the run (an end-to-end profile, 2026-11-24).
 * Here the store documents' value types are written without the codec lookups, and ASCII strings a
 * string at a time.
 *
 * <p>The bytes are what the driver itself writes for the document (its default codec for Document,
 * the id first as for any inserted document; EncodedDocumentTest compares them), so the store
 * receives the same. The map stays readable (ids, digests, rejections read it); its mutators
 * refuse, since the bytes would no longer be the document.
 */
final class EncodedDocument extends Document {
    private static final long serialVersionUID = 1L;
    private static final CodecRegistry DEFAULTS = MongoClientSettings.getDefaultCodecRegistry();
    private static final org.bson.codecs.Codec<Document> DOCUMENT_CODEC =
            DEFAULTS.get(Document.class);
    private static final EncoderContext AS_INSERTED =
            EncoderContext.builder().isEncodingCollectibleDocument(true).build();

    private final byte[] bson;

    private EncodedDocument(Document document, byte[] bson) {
        super(document);
        this.bson = bson;
    }

    /**
     * The document with its BSON; the document itself if it cannot be encoded (a NUL in a field
     * name): the writer's encoding then fails on it, and the writer makes it a dead letter
     * (WriteErrors.rejectUnwritable).
     */
    static Document of(Document document) {
        BasicOutputBuffer out = new AsciiOutputBuffer();
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            if (!writeDocument(writer, document, true)) {
                out = new AsciiOutputBuffer();
                try (BsonBinaryWriter again = new BsonBinaryWriter(out)) {
                    DOCUMENT_CODEC.encode(again, document, AS_INSERTED);
                }
            }
        } catch (org.bson.BSONException | IllegalArgumentException e) {
            return document;
        }
        return new EncodedDocument(document, out.toByteArray());
    }

    /**
     * Writes a document of the value types store documents hold (StoreDocuments) as the driver's
     * codecs write them, without their lookup of a codec per value (a registry and a cache per
     * nested document: a few per cent of the job end to end); false at the first value of another
     * type, for the driver's codec to write the whole document instead.
     */
    private static boolean writeDocument(BsonWriter w, Map<?, ?> m, boolean idFirst) {
        w.writeStartDocument();
        boolean idAhead =
                idFirst && m.containsKey("_id"); // as the driver writes an inserted document
        if (idAhead) {
            w.writeName("_id");
            if (!writeValue(w, m.get("_id"))) return false;
        }
        for (Map.Entry<?, ?> e : m.entrySet()) {
            if (!(e.getKey() instanceof String key)) return false;
            if (idAhead && key.equals("_id")) continue;
            w.writeName(key);
            if (!writeValue(w, e.getValue())) return false;
        }
        w.writeEndDocument();
        return true;
    }

    private static boolean writeValue(BsonWriter w, Object v) {
        if (v == null) {
            w.writeNull();
        } else if (v instanceof String s) {
            w.writeString(s);
        } else if (v instanceof Integer i) {
            w.writeInt32(i);
        } else if (v instanceof Long l) {
            w.writeInt64(l);
        } else if (v instanceof Boolean b) {
            w.writeBoolean(b);
        } else if (v instanceof java.util.Date d) {
            w.writeDateTime(d.getTime());
        } else if (v instanceof java.util.List<?> l) {
            w.writeStartArray();
            for (Object o : l) {
                if (!writeValue(w, o)) return false;
            }
            w.writeEndArray();
        } else if (v instanceof Map<?, ?> m) {
            return writeDocument(w, m, false);
        } else {
            return false;
        }
        return true;
    }

    byte[] bson() {
        return bson;
    }

    /**
     * BSON's output buffer, but a string of ASCII characters is copied whole: the buffer's own
     * writing puts each byte through a virtual call and a bounds check (8% of the job's samples end
     * to end). Any other string is written by the buffer's own code, byte for byte the same.
     */
    private static final class AsciiOutputBuffer extends BasicOutputBuffer {
        AsciiOutputBuffer() {
            super(2048);
        }

        @Override
        protected int writeCharacters(String s, boolean checkForNul) {
            int n = s.length();
            for (int i = 0; i < n; i++) {
                char c = s.charAt(i);
                if (c >= 0x80 || (checkForNul && c == 0))
                    return super.writeCharacters(s, checkForNul);
            }
            writeBytes(s.getBytes(StandardCharsets.ISO_8859_1), 0, n);
            writeByte(0);
            return n + 1;
        }
    }

    /**
     * The driver's codecs, with {@link Codec} for documents: the registry the store writer's client
     * uses.
     */
    static CodecRegistry codecRegistry() {
        return CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(new Codec()), DEFAULTS);
    }

    /**
     * The driver's codec for Document, except that an EncodedDocument is written as its bytes. The
     * driver asks its collection's codec for every inserted document (by the collection's document
     * class), so this one stands in for Document in the writer's registry.
     */
    static final class Codec implements CollectibleCodec<Document> {
        private final CollectibleCodec<Document> documents =
                (CollectibleCodec<Document>) DOCUMENT_CODEC;

        @Override
        public void encode(BsonWriter writer, Document value, EncoderContext context) {
            if (value instanceof EncodedDocument e) {
                try (BsonBinaryReader reader = new BsonBinaryReader(ByteBuffer.wrap(e.bson))) {
                    writer.pipe(reader);
                }
            } else {
                documents.encode(writer, value, context);
            }
        }

        @Override
        public Document decode(BsonReader reader, DecoderContext context) {
            return documents.decode(reader, context);
        }

        @Override
        public Class<Document> getEncoderClass() {
            return Document.class;
        }

        @Override
        public Document generateIdIfAbsentFromDocument(Document document) {
            return document instanceof EncodedDocument
                    ? document
                    : documents.generateIdIfAbsentFromDocument(document);
        }

        @Override
        public boolean documentHasId(Document document) {
            return documents.documentHasId(document);
        }

        @Override
        public BsonValue getDocumentId(Document document) {
            return documents.getDocumentId(document);
        }
    }

    // ---- the map cannot change under its bytes
    // ---------------------------------------------------

    private static UnsupportedOperationException unchangeable() {
        return new UnsupportedOperationException(
                "an EncodedDocument cannot change: its BSON is already written");
    }

    @Override
    public Document append(String key, Object value) {
        throw unchangeable();
    }

    @Override
    public Object put(String key, Object value) {
        throw unchangeable();
    }

    @Override
    public Object remove(Object key) {
        throw unchangeable();
    }

    @Override
    public void putAll(Map<? extends String, ?> map) {
        throw unchangeable();
    }

    @Override
    public void clear() {
        throw unchangeable();
    }
}

package io.auditpipe.flink.sink;

import com.mongodb.MongoClientSettings;
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

import java.nio.ByteBuffer;
import java.util.Map;

/**
 * A store document with its BSON, encoded where the document is built (the task's thread, for
 * events: StoreDocuments.eventInsert), so that the thread writing a batch to the store only copies
 * bytes. That thread writes one batch at a time, and the store waits while it encodes: in an
 * end-to-end profile it spent about half its time in the driver's encoding of documents (codec
 * lookups per nested document, field names, strings) with the store idle, while the task's thread
 * itself waited for the store most of the run (bench/README.md).
 *
 * <p>The bytes are what the driver itself writes for the document (its default codec for
 * Document, the id first as for any inserted document; EncodedDocumentTest compares them), so the
 * store receives the same. The map stays readable (ids, digests, rejections read it); its
 * mutators refuse, since the bytes would no longer be the document.
 */
final class EncodedDocument extends Document {
    private static final long serialVersionUID = 1L;
    private static final CodecRegistry DEFAULTS = MongoClientSettings.getDefaultCodecRegistry();
    private static final org.bson.codecs.Codec<Document> DOCUMENT_CODEC = DEFAULTS.get(Document.class);
    private static final EncoderContext AS_INSERTED = EncoderContext.builder().isEncodingCollectibleDocument(true).build();

    private final byte[] bson;

    EncodedDocument(Document document) {
        super(document);
        BasicOutputBuffer out = new BasicOutputBuffer(2048);
        try (BsonBinaryWriter writer = new BsonBinaryWriter(out)) {
            DOCUMENT_CODEC.encode(writer, document, AS_INSERTED);
        }
        bson = out.toByteArray();
    }

    byte[] bson() {
        return bson;
    }

    /** The driver's codecs, with {@link Codec} for documents: the registry the store writer's client uses. */
    static CodecRegistry codecRegistry() {
        return CodecRegistries.fromRegistries(CodecRegistries.fromCodecs(new Codec()), DEFAULTS);
    }

    /**
     * The driver's codec for Document, except that an EncodedDocument is written as its bytes. The
     * driver asks its collection's codec for every inserted document (by the collection's document
     * class), so this one stands in for Document in the writer's registry.
     */
    static final class Codec implements CollectibleCodec<Document> {
        private final CollectibleCodec<Document> documents = (CollectibleCodec<Document>) DOCUMENT_CODEC;

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
            return document instanceof EncodedDocument ? document : documents.generateIdIfAbsentFromDocument(document);
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

    // ---- the map cannot change under its bytes ---------------------------------------------------

    private static UnsupportedOperationException unchangeable() {
        return new UnsupportedOperationException("an EncodedDocument cannot change: its BSON is already written");
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

package io.auditpipe.flink.sink;

import com.mongodb.MongoException;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Date;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import org.apache.flink.metrics.Counter;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.bson.BSONException;
import org.bson.Document;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The documents the store cannot take, each a dead letter with the reason, of {@link
 * MongoBulkWriter}: in the store's dead-letter collection, and on the dead-letter topic when the
 * sink has one, every one published before the checkpoint that covers its write completes.
 */
final class StoreRejections implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StoreRejections.class);

    /**
     * A rejected document is kept whole in its dead letter up to this size (BSON allows 16 MiB).
     */
    private static final int MAX_REJECTED_DOCUMENT = 12 << 20;

    static final JsonWriterSettings JSON =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    private final MongoSinkSettings settings;
    private final MongoCollection<Document> deadLetters;
    private final Counter rejected;

    /** Publishes rejections to the dead-letter topic too (null: store only). */
    private final KafkaProducer<byte[], byte[]> producer;

    private final int maxBytes;

    /**
     * Added to by the writing threads, read by the mailbox thread only once no batch is in flight.
     */
    private final List<Future<RecordMetadata>> inFlight =
            Collections.synchronizedList(new ArrayList<>());

    StoreRejections(
            MongoSinkSettings settings, MongoCollection<Document> deadLetters, Counter rejected) {
        this.settings = settings;
        this.deadLetters = deadLetters;
        this.rejected = rejected;
        if (settings.deadLetterTopic != null) {
            Properties props = new Properties();
            props.putAll(settings.deadLetterProducer);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            this.maxBytes =
                    Integer.parseInt(
                            settings.deadLetterProducer.getOrDefault(
                                    ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
                                    String.valueOf(1 << 20)));
            this.producer =
                    new KafkaProducer<>(
                            props, new ByteArraySerializer(), new ByteArraySerializer());
        } else {
            this.maxBytes = 0;
            this.producer = null;
        }
    }

    void reject(WriteModel<Document> model, String deadLetterId, String reason) {
        rejected.inc();
        Document doc = documentOf(model);
        Object id = doc == null ? null : doc.get("_id");
        Document original;
        if (doc == null) {
            original = new Document("text", String.valueOf(model));
        } else {
            String json = doc.toJson();
            original =
                    json.length() <= MAX_REJECTED_DOCUMENT
                            ? new Document("document", doc).append("length", json.length())
                            : new Document("text", json.substring(0, 1 << 20))
                                    .append("length", json.length())
                                    .append("truncated", true);
        }
        Document dead =
                new Document(
                                "_id",
                                deadLetterId != null
                                        ? deadLetterId
                                        : "store:" + settings.collection + ":" + id)
                        .append("stage", "store")
                        .append("reason", reason)
                        .append("original", original)
                        .append("detected_at", new Date());
        LOG.error("{} (document {})", reason, id);
        try {
            insert(dead);
        } catch (MongoException | BSONException ex) {
            boolean refused =
                    !(ex instanceof MongoException m)
                            || WriteErrors.PERMANENT.contains(m.getCode())
                            || WriteErrors.bsonCause(ex) != null;
            if (!refused || doc == null) {
                throw ex; // cannot record it: fail rather than lose it
            }
            // what the store refused in the document, it refuses in the dead letter too ($-prefixed
            // or dotted field names on FerretDB), and what cannot be BSON cannot be inside one:
            // keep the document as JSON text instead
            String json = doc.toJson(JSON);
            dead.put(
                    "original",
                    new Document(
                                    "text",
                                    json.length() <= MAX_REJECTED_DOCUMENT
                                            ? json
                                            : json.substring(0, 1 << 20))
                            .append("length", json.length())
                            .append("truncated", json.length() > MAX_REJECTED_DOCUMENT));
            insert(dead);
        }
        if (settings.rejections != null) {
            settings.rejections.rejected(reason);
        }
        if (producer != null) {
            inFlight.add(
                    producer.send(
                            new ProducerRecord<>(
                                    settings.deadLetterTopic,
                                    dead.getString("_id").getBytes(StandardCharsets.UTF_8),
                                    topicJson(dead, maxBytes))));
        }
    }

    private void insert(Document dead) {
        try {
            deadLetters.insertOne(dead);
        } catch (MongoException ex) {
            if (ex.getCode() != WriteErrors.DUPLICATE_KEY) {
                throw ex;
            }
        }
    }

    /**
     * Before a checkpoint completes, every rejection of the writes it covers is on the topic (at
     * least once).
     */
    void flush() throws IOException, InterruptedException {
        if (producer == null || inFlight.isEmpty()) {
            return;
        }
        producer.flush();
        try {
            for (Future<RecordMetadata> sent : inFlight) {
                sent.get();
            }
        } catch (ExecutionException e) {
            throw new IOException(
                    "publishing a store rejection to "
                            + settings.deadLetterTopic
                            + " failed; the job"
                            + " restarts from its last checkpoint and rejects the document again: "
                            + e.getCause(),
                    e.getCause());
        }
        inFlight.clear();
    }

    /**
     * The rejection's dead letter as the topic's JSON, at most the topic's message size: a rejected
     * document larger than that keeps its first bytes as text (the store's copy keeps it whole).
     */
    static byte[] topicJson(Document dead, int maxBytes) {
        byte[] json = dead.toJson(JSON).getBytes(StandardCharsets.UTF_8);
        int budget = maxBytes - 4096;
        if (json.length <= budget) {
            return json;
        }
        Document original = (Document) dead.get("original");
        String whole =
                original.containsKey("document")
                        ? ((Document) original.get("document")).toJson(JSON)
                        : String.valueOf(original.get("text"));
        Document smaller = new Document(dead);
        smaller.put(
                "original",
                new Document("text", whole.substring(0, Math.min(whole.length(), budget / 4)))
                        .append("length", original.get("length"))
                        .append("truncated", true));
        return smaller.toJson(JSON).getBytes(StandardCharsets.UTF_8);
    }

    static Document documentOf(WriteModel<Document> model) {
        if (model instanceof InsertOneModel)
            return ((InsertOneModel<Document>) model).getDocument();
        if (model instanceof ReplaceOneModel)
            return ((ReplaceOneModel<Document>) model).getReplacement();
        if (model instanceof UpdateOneModel)
            return (Document) ((UpdateOneModel<Document>) model).getFilter();
        return null;
    }

    @Override
    public void close() {
        if (producer != null) {
            producer.close(Duration.ofSeconds(10));
        }
    }
}

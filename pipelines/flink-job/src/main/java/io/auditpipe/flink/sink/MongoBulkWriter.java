package io.auditpipe.flink.sink;

import com.mongodb.ConnectionString;
import com.mongodb.MongoBulkWriteException;
import com.mongodb.MongoClientSettings;
import com.mongodb.MongoException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.BulkWriteOptions;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.ReplaceOneModel;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.auditpipe.flink.document.EventDocument;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.ThreadSafeSimpleCounter;
import org.apache.flink.metrics.groups.SinkWriterMetricGroup;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.bson.BSONException;
import org.bson.BsonBinaryWriter;
import org.bson.Document;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriterSettings;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The writer of {@link MongoBulkSink}. Records are buffered in the task's mailbox thread; each full
 * batch is written, retried and sorted out (rejections, collisions, metrics) on the writing thread
 * of {@link BatchInFlight}, one batch at a time, while the mailbox thread fills the next. {@link
 * #flush} (before every checkpoint) waits until the last batch is written.
 */
class MongoBulkWriter<T> implements SinkWriter<T> {
    private static final Logger LOG = LoggerFactory.getLogger(MongoBulkWriter.class);
    static final int DUPLICATE_KEY = 11000;

    /**
     * Write errors that no retry can cure: the document itself is wrong for the store (bad value or
     * type, invalid field name, failed validation, too large). Every other code, known or not,
     * counts as transient and is retried; when retries run out the job fails and restarts from its
     * checkpoint. An unknown error can stop the pipeline but never loses an event.
     */
    static final Set<Integer> PERMANENT =
            Set.of(
                    2, // BadValue
                    9, // FailedToParse
                    14, // TypeMismatch
                    22, // InvalidBSON
                    52, // DollarPrefixedFieldName
                    53, // InvalidIdField
                    55, // InvalidDBRef
                    56, // EmptyFieldName
                    57, // DottedFieldName
                    121, // DocumentValidationFailure
                    10334, // BSONObjectTooLarge
                    17419, // document too large for the collection
                    17280); // KeyTooLong

    /**
     * A rejected document is kept whole in its dead letter up to this size (BSON allows 16 MiB).
     */
    private static final int MAX_REJECTED_DOCUMENT = 12 << 20;

    /** What to do with one failed write of a bulk request. */
    enum Outcome {
        ALREADY_STORED,
        CHECK_FOR_COLLISION,
        RETRY,
        REJECT
    }

    static Outcome classify(int code, WriteModel<Document> model, String digestField) {
        if (code == DUPLICATE_KEY && model instanceof InsertOneModel) {
            Document doc = ((InsertOneModel<Document>) model).getDocument();
            return digestField != null && doc.containsKey(digestField)
                    ? Outcome.CHECK_FOR_COLLISION
                    : Outcome.ALREADY_STORED;
        }
        if (PERMANENT.contains(code)) {
            return Outcome.REJECT;
        }
        return Outcome
                .RETRY; // includes a duplicate key on an upsert (two upserts racing): the retry
        // updates
    }

    /**
     * One write per upserted document and request: when a batch holds several upserts of the same
     * {@code _id} (a stats row fired again before the flush), only the last one is kept, in its
     * place. Two upserts of one row in an unordered request could apply in either order, and a
     * partial failure would retry the older one after the newer had succeeded, leaving a stale
     * count.
     */
    static List<WriteModel<Document>> latestUpsertPerId(List<WriteModel<Document>> models) {
        Map<Object, Integer> lastIndex = new HashMap<>();
        for (int i = 0; i < models.size(); i++) {
            if (models.get(i) instanceof UpdateOneModel) {
                Object id =
                        ((Document) ((UpdateOneModel<Document>) models.get(i)).getFilter())
                                .get("_id");
                if (id != null) {
                    lastIndex.put(id, i);
                }
            }
        }
        if (lastIndex.isEmpty()) {
            return models;
        }
        List<WriteModel<Document>> out = new ArrayList<>(models.size());
        for (int i = 0; i < models.size(); i++) {
            WriteModel<Document> m = models.get(i);
            if (m instanceof UpdateOneModel) {
                Object id = ((Document) ((UpdateOneModel<Document>) m).getFilter()).get("_id");
                if (id != null && lastIndex.get(id) != i) {
                    continue;
                }
            }
            out.add(m);
        }
        return out;
    }

    /**
     * Upserts per request on FerretDB. FerretDB 1.24 (SQLite backend) holds a pooled SQLite
     * connection per update statement until the whole command ends; its pool has 100 connections,
     * and one update command of ~300 upserts next to any other writer deadlocks the server
     * (reproduced: docs/store.md). 25 per request keeps two parallel writers far below that. On
     * MongoDB the whole batch goes in one request.
     */
    static final int FERRETDB_MAX_UPDATES_PER_REQUEST = 25;

    private final MongoSinkSettings settings;
    private final MongoBulkSink.ToWriteModel<T> toWriteModel;
    private final FlushTimer flushTimer;
    private final MongoClient client;
    private final MongoCollection<Document> collection;
    private final MongoCollection<Document> deadLetters;
    private final Counter written;
    private final Counter duplicates;
    private final Counter retries;
    private final Counter rejected;
    private final Counter collisions;

    /**
     * Batches started, by what started them: the buffer full, the flush timer, a checkpoint (or the
     * end of input).
     */
    private final Counter fullBatches;

    private final Counter timerBatches;
    private final Counter checkpointBatches;
    private final int maxUpdatesPerRequest;
    private final boolean ferretDb;

    /** Filled by the mailbox thread only; handed over whole to {@link #batches}. */
    private List<WriteModel<Document>> buffer = new ArrayList<>();

    private final BatchInFlight batches;
    private volatile boolean closed;

    /**
     * Publishes rejections to the dead-letter topic too (null: store only); flushed before each
     * checkpoint.
     */
    private final KafkaProducer<byte[], byte[]> rejectionProducer;

    private final int rejectionMaxBytes;

    /**
     * Added to by the writing threads, read by the mailbox thread only once no batch is in flight.
     */
    private final List<Future<RecordMetadata>> rejectionsInFlight =
            java.util.Collections.synchronizedList(new ArrayList<>());

    private static final JsonWriterSettings JSON =
            JsonWriterSettings.builder().outputMode(JsonMode.RELAXED).build();

    MongoBulkWriter(
            MongoSinkSettings settings,
            MongoBulkSink.ToWriteModel<T> toWriteModel,
            ProcessingTimeService time,
            SinkWriterMetricGroup metrics) {
        this.settings = settings;
        this.toWriteModel = toWriteModel;
        this.flushTimer = new FlushTimer(time, settings.flushIntervalMillis, this::onFlushTimer);
        this.client =
                MongoClients.create(
                        MongoClientSettings.builder()
                                .applyConnectionString(new ConnectionString(settings.uri))
                                // a store that stops answering becomes a retried error, never an
                                // endless wait
                                .applyToSocketSettings(
                                        s ->
                                                s.connectTimeout(10, TimeUnit.SECONDS)
                                                        .readTimeout(
                                                                (int) settings.requestTimeoutMillis,
                                                                TimeUnit.MILLISECONDS))
                                .applyToClusterSettings(
                                        s -> s.serverSelectionTimeout(30, TimeUnit.SECONDS))
                                .codecRegistry(
                                        EncodedDocument
                                                .codecRegistry()) // documents encoded before the
                                // batch: copied, not encoded
                                // again
                                .build());
        this.collection = client.getDatabase(settings.database).getCollection(settings.collection);
        this.ferretDb = isFerretDb();
        this.maxUpdatesPerRequest = ferretDb ? FERRETDB_MAX_UPDATES_PER_REQUEST : Integer.MAX_VALUE;
        this.deadLetters =
                client.getDatabase(settings.database).getCollection(settings.deadLetterCollection);
        // counted by the writing threads, several at once when more than one batch is in flight
        this.written = metrics.counter("documentsWritten", new ThreadSafeSimpleCounter());
        this.duplicates = metrics.counter("duplicatesIgnored", new ThreadSafeSimpleCounter());
        this.retries = metrics.counter("writeRetries", new ThreadSafeSimpleCounter());
        this.rejected = metrics.counter("documentsRejected", new ThreadSafeSimpleCounter());
        this.collisions = metrics.counter("idCollisions", new ThreadSafeSimpleCounter());
        this.fullBatches = metrics.counter("batchesFull");
        this.timerBatches = metrics.counter("batchesOnFlushTimer");
        this.checkpointBatches = metrics.counter("batchesOnCheckpoint");
        if (settings.deadLetterTopic != null) {
            Properties props = new Properties();
            props.putAll(settings.deadLetterProducer);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            this.rejectionMaxBytes =
                    Integer.parseInt(
                            settings.deadLetterProducer.getOrDefault(
                                    ProducerConfig.MAX_REQUEST_SIZE_CONFIG,
                                    String.valueOf(1 << 20)));
            this.rejectionProducer =
                    new KafkaProducer<>(
                            props, new ByteArraySerializer(), new ByteArraySerializer());
        } else {
            this.rejectionMaxBytes = 0;
            this.rejectionProducer = null;
        }
        // more than one batch at once on FerretDB only: a capped collection keeps the order batches
        // arrive in,
        // and MongoDB trims its own by that order, where the chain needs a server's links removed
        // oldest first;
        // the local FerretDB is trimmed by auditpipe's supervisor, which keeps that
        // (store.chain_prefix_bound)
        this.batches =
                new BatchInFlight(settings.collection, ferretDb ? settings.batchesInFlight : 1);
        // how long the task waited for the store: what the store holds back of the operators
        // chained before this sink
        metrics.gauge("storeWaitMillis", batches::waitedMillis);
        // how long the store had a batch of this writer's: beside the task's time, how much of it
        // the store was kept busy
        metrics.gauge("storeBusyMillis", batches::writingMillis);
    }

    /** Feature detection: buildInfo of FerretDB 1.x has "ferretdbVersion", of 2.x "ferretdb". */
    private boolean isFerretDb() {
        try {
            Document info = client.getDatabase("admin").runCommand(new Document("buildInfo", 1));
            boolean ferret = info.containsKey("ferretdbVersion") || info.containsKey("ferretdb");
            LOG.info(
                    "store for {} is {}",
                    settings.collection,
                    ferret ? "FerretDB" : "MongoDB " + info.get("version"));
            return ferret;
        } catch (MongoException e) {
            LOG.warn("buildInfo failed ({}); assuming FerretDB limits", e.getMessage());
            return true;
        }
    }

    /** The flush timer: the buffer as a batch; watched again while a batch is in flight. */
    private boolean onFlushTimer() throws IOException, InterruptedException {
        if (closed) {
            return false;
        }
        batches.throwIfFailed(); // a failed batch fails the job now, not at the next record
        flushBuffer(timerBatches);
        return batches.anyInFlight();
    }

    @Override
    public void write(T element, Context context) throws IOException, InterruptedException {
        buffer.add(toWriteModel.apply(element));
        if (buffer.size() >= settings.batchSize) {
            flushBuffer(fullBatches);
        }
        flushTimer.watch();
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
        flushBuffer(checkpointBatches);
        batches.awaitIdle();
        flushRejections();
    }

    /**
     * Before a checkpoint completes, every rejection of the writes it covers is on the topic (at
     * least once).
     */
    private void flushRejections() throws IOException, InterruptedException {
        if (rejectionProducer == null || rejectionsInFlight.isEmpty()) {
            return;
        }
        rejectionProducer.flush();
        try {
            for (Future<RecordMetadata> sent : rejectionsInFlight) {
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
        rejectionsInFlight.clear();
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

    /**
     * Starts writing the buffer as one batch once the batch before it is written, counted in {@code
     * startedBy}.
     */
    private void flushBuffer(Counter startedBy) throws IOException, InterruptedException {
        if (buffer.isEmpty()) {
            return;
        }
        startedBy.inc();
        List<WriteModel<Document>> batch = buffer;
        buffer = new ArrayList<>(settings.batchSize);
        batches.start(() -> writeBatch(batch));
    }

    /**
     * On the writing thread: the batch in requests of at most {@link #maxUpdatesPerRequest}
     * upserts.
     */
    private void writeBatch(List<WriteModel<Document>> batch)
            throws IOException, InterruptedException {
        List<WriteModel<Document>> all = latestUpsertPerId(batch);
        boolean hasUpdates = all.get(0) instanceof UpdateOneModel;
        int chunk = hasUpdates ? maxUpdatesPerRequest : all.size();
        for (int from = 0; from < all.size(); from += chunk) {
            writeWithRetries(
                    new ArrayList<>(all.subList(from, Math.min(all.size(), from + chunk))));
        }
    }

    private void writeWithRetries(List<WriteModel<Document>> pending)
            throws IOException, InterruptedException {
        long backoff = settings.retryBackoffMillis;
        int attempt = 0;
        while (!pending.isEmpty()) {
            MongoException failure;
            try {
                collection.bulkWrite(pending, new BulkWriteOptions().ordered(false));
                written.inc(pending.size());
                return;
            } catch (MongoBulkWriteException e) {
                try {
                    pending = sortOutErrors(pending, e);
                } catch (MongoException lookupFailed) {
                    failure = lookupFailed; // the collision check could not read: the whole batch
                    // again
                    pending = new ArrayList<>(pending);
                    attempt++;
                    if (attempt > settings.maxRetries) {
                        throw new IOException(
                                "checking duplicates in "
                                        + settings.collection
                                        + " failed after "
                                        + settings.maxRetries
                                        + " retries: "
                                        + failure.getMessage(),
                                failure);
                    }
                    retries.inc();
                    Thread.sleep(backoff);
                    backoff = Math.min(backoff * 2, settings.retryMaxBackoffMillis);
                    continue;
                }
                if (pending.isEmpty()) {
                    return;
                }
                failure = e;
            } catch (MongoException e) {
                if (bsonCause(e) != null) {
                    pending = rejectUnwritable(pending, e);
                    continue;
                }
                failure =
                        e; // network, timeout, server selection: the whole batch again (writes are
                // idempotent)
            } catch (BSONException e) {
                // the driver could not write a document as BSON (a NUL in a field name): no retry
                // cures it,
                // and failing the job would replay the record and fail again, for good
                pending = rejectUnwritable(pending, e);
                continue;
            }
            attempt++;
            if (attempt > settings.maxRetries) {
                throw new IOException(
                        "writing "
                                + pending.size()
                                + " documents to "
                                + settings.collection
                                + " failed after "
                                + settings.maxRetries
                                + " retries; the job restarts from its last"
                                + " checkpoint: "
                                + failure.getMessage(),
                        failure);
            }
            retries.inc();
            LOG.warn(
                    "bulk write to {} failed (attempt {} of {}), retrying {} documents in {} ms: {}",
                    settings.collection,
                    attempt,
                    settings.maxRetries,
                    pending.size(),
                    backoff,
                    failure.getMessage());
            Thread.sleep(backoff);
            backoff = Math.min(backoff * 2, settings.retryMaxBackoffMillis);
        }
    }

    private static BSONException bsonCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof BSONException b) return b;
        }
        return null;
    }

    /**
     * The writes of {@code pending} whose documents cannot be written as BSON at all become dead
     * letters (each tried alone with the collection's codecs); the others are returned to be
     * written. If none of them is at fault, {@code cause} is thrown: it was not a document's doing.
     */
    private List<WriteModel<Document>> rejectUnwritable(
            List<WriteModel<Document>> pending, RuntimeException cause) {
        List<WriteModel<Document>> rest = new ArrayList<>(pending.size());
        for (WriteModel<Document> model : pending) {
            String problem = unwritable(model);
            if (problem == null) {
                rest.add(model);
            } else {
                reject(
                        model,
                        null,
                        "the document cannot be written as BSON for "
                                + settings.collection
                                + ": "
                                + problem);
            }
        }
        if (rest.size() == pending.size()) throw cause;
        return rest;
    }

    /**
     * Why this write's documents cannot be encoded (a NUL shown as backslash-u0000), or null if
     * they can.
     */
    private String unwritable(WriteModel<Document> model) {
        try (BsonBinaryWriter writer = new BsonBinaryWriter(new BasicOutputBuffer())) {
            Document doc = documentOf(model);
            if (doc != null) {
                collection
                        .getCodecRegistry()
                        .get(Document.class)
                        .encode(writer, doc, EncoderContext.builder().build());
            }
            if (model instanceof UpdateOneModel<Document> update && update.getUpdate() != null) {
                update.getUpdate().toBsonDocument(Document.class, collection.getCodecRegistry());
            }
            return null;
        } catch (BSONException e) {
            return String.valueOf(e.getMessage()).replace("\0", "\\u0000");
        }
    }

    /**
     * Counts what succeeded, records permanent rejections and collisions, and returns the writes to
     * retry.
     */
    private List<WriteModel<Document>> sortOutErrors(
            List<WriteModel<Document>> pending, MongoBulkWriteException e) {
        List<WriteModel<Document>> retry = new ArrayList<>();
        List<Document> maybeCollisions = new ArrayList<>();
        boolean retryAll = e.getWriteConcernError() != null;
        int failed = 0;
        for (BulkWriteError err : e.getWriteErrors()) {
            failed++;
            WriteModel<Document> model = pending.get(err.getIndex());
            switch (classify(err.getCode(), model, ferretDb ? null : settings.digestField)) {
                case ALREADY_STORED -> duplicates.inc();
                case CHECK_FOR_COLLISION ->
                        maybeCollisions.add(((InsertOneModel<Document>) model).getDocument());
                case RETRY -> retry.add(model);
                default -> {
                    reject(
                            model,
                            null,
                            "the store rejected the document for "
                                    + settings.collection
                                    + ": error "
                                    + err.getCode()
                                    + ": "
                                    + err.getMessage());
                }
            }
        }
        written.inc(pending.size() - failed);
        if (!maybeCollisions.isEmpty()) {
            checkForCollisions(maybeCollisions);
        }
        return retryAll ? pending : retry;
    }

    /**
     * A duplicate key on an insert is normally a replay of a record already stored. It is a
     * collision when the stored document came from a different line (its digest differs): two
     * sources configured with one server name, or a server that reuses record ids. The new record
     * must not vanish as "already stored": it becomes a dead letter with both digests.
     *
     * <p>MongoDB only. FerretDB 1.24 evaluates {@code _id $in} by reading the whole collection, and
     * under write load even single {@code _id} lookups took most of a second each (a replay of a
     * few hundred lines stalled the job past its checkpoint timeout). There, and everywhere for
     * copies that arrive within the stats' horizon, the job's keyed check catches collisions
     * instead ({@link io.auditpipe.flink.chain.ChainEvents}), with the same dead-letter id.
     */
    private void checkForCollisions(List<Document> inserts) {
        Map<Object, Document> byId = new LinkedHashMap<>();
        inserts.forEach(d -> byId.put(d.get("_id"), d));
        Map<Object, Object> storedDigest = storedDigests(byId.keySet());
        for (Document doc : byId.values()) {
            Object mine = doc.get(settings.digestField);
            Object theirs = storedDigest.get(doc.get("_id"));
            if (theirs == null || mine.equals(theirs)) {
                duplicates
                        .inc(); // the same line again (or already trimmed by the capped collection)
                continue;
            }
            collisions.inc();
            reject(
                    new InsertOneModel<>(doc),
                    EventDocument.collisionId(doc.get("_id"), mine),
                    "id collision: a different record with id "
                            + doc.get("_id")
                            + " is already stored in "
                            + settings.collection
                            + " (stored "
                            + settings.digestField
                            + " "
                            + theirs
                            + ", this one "
                            + mine
                            + "). Two sources share a server name, or the server reused a record id;"
                            + " this record is kept here, not stored as an event");
        }
    }

    /** The stored digests of these ids: one {@code _id $in} query, answered from the _id index. */
    private Map<Object, Object> storedDigests(java.util.Collection<Object> ids) {
        Map<Object, Object> out = new HashMap<>();
        for (Document stored :
                collection
                        .find(Filters.in("_id", ids))
                        .projection(Projections.include(settings.digestField))) {
            out.put(stored.get("_id"), stored.get(settings.digestField));
        }
        return out;
    }

    private void reject(WriteModel<Document> model, String deadLetterId, String reason) {
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
            insertDeadLetter(dead);
        } catch (MongoException | BSONException ex) {
            boolean refused =
                    !(ex instanceof MongoException m)
                            || PERMANENT.contains(m.getCode())
                            || bsonCause(ex) != null;
            if (!refused || doc == null) {
                throw ex; // cannot record it: fail rather than lose it
            }
            // what the store refused in the document, it refuses in the dead letter too ($-prefixed
            // or
            // dotted field names on FerretDB), and what cannot be BSON cannot be inside one: keep
            // the
            // document as JSON text instead
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
            insertDeadLetter(dead);
        }
        if (settings.rejections != null) {
            settings.rejections.rejected(reason);
        }
        if (rejectionProducer != null) {
            rejectionsInFlight.add(
                    rejectionProducer.send(
                            new ProducerRecord<>(
                                    settings.deadLetterTopic,
                                    dead.getString("_id").getBytes(StandardCharsets.UTF_8),
                                    topicJson(dead, rejectionMaxBytes))));
        }
    }

    private void insertDeadLetter(Document dead) {
        try {
            deadLetters.insertOne(dead);
        } catch (MongoException ex) {
            if (ex.getCode() != DUPLICATE_KEY) {
                throw ex;
            }
        }
    }

    private static Document documentOf(WriteModel<Document> model) {
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
        closed = true;
        batches.close();
        if (rejectionProducer != null) {
            rejectionProducer.close(Duration.ofSeconds(10));
        }
        client.close();
    }
}

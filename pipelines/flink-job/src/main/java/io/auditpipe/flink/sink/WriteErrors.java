package io.auditpipe.flink.sink;

import com.mongodb.MongoBulkWriteException;
import com.mongodb.bulk.BulkWriteError;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.InsertOneModel;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.UpdateOneModel;
import com.mongodb.client.model.WriteModel;
import io.auditpipe.flink.document.EventDocument;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.flink.metrics.Counter;
import org.bson.BSONException;
import org.bson.BsonBinaryWriter;
import org.bson.Document;
import org.bson.codecs.EncoderContext;
import org.bson.io.BasicOutputBuffer;

/**
 * What the store said of a bulk request's writes, sorted out for {@link MongoBulkWriter}: counted
 * as written, a copy already stored, a collision or a document the store refuses (each a dead
 * letter, {@link StoreRejections}), or a write to retry.
 */
record WriteErrors(
        MongoSinkSettings settings,
        MongoCollection<Document> collection,
        boolean ferretDb,
        StoreRejections rejections,
        Counter written,
        Counter duplicates,
        Counter collisions) {
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
                // includes a duplicate key on an upsert (two upserts racing): the retry updates
                .RETRY;
    }

    /**
     * Counts what succeeded, records permanent rejections and collisions, and returns the writes to
     * retry.
     */
    List<WriteModel<Document>> sortOut(
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
                    rejections.reject(
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
            rejections.reject(
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

    /**
     * The writes of {@code pending} whose documents cannot be written as BSON at all become dead
     * letters (each tried alone with the collection's codecs); the others are returned to be
     * written. If none of them is at fault, {@code cause} is thrown: it was not a document's doing.
     */
    List<WriteModel<Document>> rejectUnwritable(
            List<WriteModel<Document>> pending, RuntimeException cause) {
        List<WriteModel<Document>> rest = new ArrayList<>(pending.size());
        for (WriteModel<Document> model : pending) {
            String problem = unwritable(model);
            if (problem == null) {
                rest.add(model);
            } else {
                rejections.reject(
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
            Document doc = StoreRejections.documentOf(model);
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

    static BSONException bsonCause(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof BSONException b) return b;
        }
        return null;
    }
}

package io.auditpipe.flink.sink;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Batches of a {@link MongoBulkWriter} being written, on threads of their own, while the task's
 * thread fills the next one, so that the job and the store work at the same time: with the task's
 * thread waiting for every bulk write, neither kept a core busy (measured 2026-11-24).
 *
 * <p>At most {@code maxInFlight} at once. With one (the default), batches are written one after
 * another, in the order they were started (a batch starts only when the one before it has
 * finished), so the latest upsert of a row is the one stored: every writer of upserts keeps one. A
 * writer of inserts only may have two: an insert by {@code _id} lands once whatever the order, and
 * the store can decode one request while it commits the other (the events' writer on FerretDB:
 * {@link MongoSinkSettings#withBatchesInFlight}).
 *
 * <p>A batch's failure (its retries exhausted) is thrown in the task's thread, by the next {@link
 * #start}, by {@link #awaitIdle} or by {@link #throwIfFailed}; {@link #awaitIdle} is called before
 * every checkpoint, so no checkpoint completes while a batch it covers is unwritten. At most {@code
 * maxInFlight + 1} batches are held in memory, and a slow store still holds the task back
 * (backpressure).
 */
final class BatchInFlight implements AutoCloseable {
    /** One batch's writing: its retries, rejections and metrics, all done on the writing thread. */
    @FunctionalInterface
    interface Write {
        void run() throws IOException, InterruptedException;
    }

    private final ExecutorService threads;
    private final int maxInFlight;

    /**
     * The batches started and not yet seen finished, oldest first; touched by the task's thread
     * only.
     */
    private final ArrayDeque<Future<?>> inFlight = new ArrayDeque<>();

    /**
     * Time the task's thread waited for a batch to be written (the store holding the task back);
     * written by the task's thread only.
     */
    private volatile long waitedNanos;

    /**
     * Time at least one batch was being written (the store busy with this writer's batches);
     * guarded by this.
     */
    private long writingNanos;

    private int writing;
    private long writingSince;

    /**
     * One batch at a time; {@code name} names the thread (the collection it writes to), for thread
     * dumps and profiles.
     */
    BatchInFlight(String name) {
        this(name, 1);
    }

    BatchInFlight(String name, int maxInFlight) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException(
                    "batches in flight must be at least 1, not " + maxInFlight);
        }
        this.maxInFlight = maxInFlight;
        AtomicInteger made = new AtomicInteger();
        this.threads =
                Executors.newFixedThreadPool(
                        maxInFlight,
                        r -> {
                            Thread t =
                                    new Thread(
                                            r,
                                            "auditpipe store writer: "
                                                    + name
                                                    + (maxInFlight > 1
                                                            ? " #" + made.incrementAndGet()
                                                            : ""));
                            t.setDaemon(true);
                            // the task's context class loader is inherited: the driver is in the
                            // job's jar
                            return t;
                        });
    }

    /**
     * Waits until fewer than the most batches allowed are in flight (throwing a failure here), then
     * starts writing this one.
     */
    void start(Write write) throws IOException, InterruptedException {
        throwIfFailed();
        while (inFlight.size() >= maxInFlight) {
            awaitOldest();
        }
        inFlight.addLast(
                threads.submit(
                        () -> {
                            writingBegins();
                            try {
                                write.run();
                            } finally {
                                writingEnds();
                            }
                            return null;
                        }));
    }

    /**
     * Whether a batch is started and not yet seen finished (a finished one is seen by {@link
     * #throwIfFailed}).
     */
    boolean anyInFlight() {
        return !inFlight.isEmpty();
    }

    /** Waits until no batch is in flight; the first failure among them is thrown here. */
    void awaitIdle() throws IOException, InterruptedException {
        while (!inFlight.isEmpty()) {
            awaitOldest();
        }
    }

    /** Waits for the oldest batch in flight and forgets it, throwing its failure. */
    private void awaitOldest() throws IOException, InterruptedException {
        Future<?> oldest = inFlight.peekFirst();
        long waitFrom = oldest.isDone() ? 0 : System.nanoTime();
        try {
            throwFailure(oldest);
        } finally {
            if (waitFrom != 0) {
                waitedNanos += System.nanoTime() - waitFrom;
            }
            if (oldest.isDone()) {
                inFlight.removeFirst();
            }
        }
    }

    /**
     * Milliseconds the task's thread has waited, in all, for batches to be written (metric {@code
     * storeWaitMillis}).
     */
    long waitedMillis() {
        return waitedNanos / 1_000_000;
    }

    /**
     * Milliseconds at least one batch was being written, in all (metric {@code storeBusyMillis}):
     * set beside the task's running time, how much of it the store had work from this writer. What
     * the task waited ({@link #waitedMillis}) is only the part of it the task had nothing else to
     * do.
     */
    synchronized long writingMillis() {
        return (writingNanos + (writing > 0 ? System.nanoTime() - writingSince : 0)) / 1_000_000;
    }

    private synchronized void writingBegins() {
        if (writing++ == 0) {
            writingSince = System.nanoTime();
        }
    }

    private synchronized void writingEnds() {
        if (--writing == 0) {
            writingNanos += System.nanoTime() - writingSince;
        }
    }

    /** Throws the failure of a batch that has finished, without waiting for one that has not. */
    void throwIfFailed() throws IOException, InterruptedException {
        for (Iterator<Future<?>> it = inFlight.iterator(); it.hasNext(); ) {
            Future<?> batch = it.next();
            if (batch.isDone()) {
                it.remove(); // reported once
                throwFailure(batch);
            }
        }
    }

    /**
     * Waits for the batch, then throws its failure as itself (an IOException, a RuntimeException,
     * an Error).
     */
    private static void throwFailure(Future<?> batch) throws IOException, InterruptedException {
        try {
            batch.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof IOException) {
                throw (IOException) cause;
            }
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IOException("writing a batch was interrupted: " + cause, cause);
        }
    }

    /**
     * Stops the writing threads; a batch still in flight is abandoned (the checkpoint never covered
     * it).
     */
    @Override
    public void close() {
        threads.shutdownNow();
        try {
            threads.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

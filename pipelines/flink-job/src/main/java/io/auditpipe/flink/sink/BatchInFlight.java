package io.auditpipe.flink.sink;

import java.io.IOException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * At most one batch of a {@link MongoBulkWriter} being written, on a thread of its own, while the
 * task's thread fills the next one. Before this, the task's thread waited for every bulk write,
 * and neither the job nor the store kept a core busy (bench/README.md, issue 11).
 *
 * <p>What it keeps: batches are written one after another, in the order they were started (a
 * batch starts only when the one before it has finished), so the latest upsert of a row is the one
 * stored. A batch's failure (its retries exhausted) is thrown in the task's thread, by the next
 * {@link #start}, by {@link #awaitIdle} or by {@link #throwIfFailed}; {@link #awaitIdle} is called
 * before every checkpoint, so no checkpoint completes while a batch it covers is unwritten. At most
 * two batches are held in memory, and a slow store still holds the task back (backpressure).
 */
final class BatchInFlight implements AutoCloseable {
    /** One batch's writing: its retries, rejections and metrics, all done on the writing thread. */
    @FunctionalInterface
    interface Write {
        void run() throws IOException, InterruptedException;
    }

    private final ExecutorService thread;
    private Future<?> inFlight;
    /** Time the task's thread waited for a batch to be written (the store holding the task back); written by the task's thread only. */
    private volatile long waitedNanos;
    /** Time a batch was being written (the store busy with this writer's batches); written by the writing thread only. */
    private volatile long writingNanos;

    /** {@code name} names the thread (the collection it writes to), for thread dumps and profiles. */
    BatchInFlight(String name) {
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "auditpipe store writer: " + name);
            t.setDaemon(true);
            return t; // the task's context class loader is inherited: the driver is in the job's jar
        });
    }

    /** Waits for the batch in flight (throwing its failure here), then starts writing this one. */
    void start(Write write) throws IOException, InterruptedException {
        awaitIdle();
        inFlight = thread.submit(() -> {
            long from = System.nanoTime();
            try {
                write.run();
            } finally {
                writingNanos += System.nanoTime() - from;
            }
            return null;
        });
    }

    /** Waits until no batch is in flight; the failure of the last one is thrown here. */
    void awaitIdle() throws IOException, InterruptedException {
        if (inFlight == null) {
            return;
        }
        Future<?> last = inFlight;
        long waitFrom = last.isDone() ? 0 : System.nanoTime();
        try {
            last.get();
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
        } finally {
            if (waitFrom != 0) {
                waitedNanos += System.nanoTime() - waitFrom;
            }
            if (last.isDone()) {
                inFlight = null;
            }
        }
    }

    /** Milliseconds the task's thread has waited, in all, for batches to be written (metric {@code storeWaitMillis}). */
    long waitedMillis() {
        return waitedNanos / 1_000_000;
    }

    /**
     * Milliseconds a batch was being written, in all (metric {@code storeBusyMillis}): set beside the
     * task's running time, how much of it the store had work from this writer. What the task waited
     * ({@link #waitedMillis}) is only the part of it the task had nothing else to do.
     */
    long writingMillis() {
        return writingNanos / 1_000_000;
    }

    /** Throws the failure of a batch that has finished, without waiting for one that has not. */
    void throwIfFailed() throws IOException, InterruptedException {
        if (inFlight != null && inFlight.isDone()) {
            awaitIdle();
        }
    }

    /** Stops the writing thread; a batch still in flight is abandoned (the checkpoint never covered it). */
    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}

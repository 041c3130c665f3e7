package io.auditpipe.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The store writer's batches in flight: order, overlap with the task, failures, checkpoints. A test
 * that would hang (a batch waiting for one that waits for the test) fails at its timeout.
 */
@Timeout(30)
class BatchInFlightTest {

    /**
     * A batch that says it runs, waits until it may finish, and then notes {@code name} in {@code
     * done}.
     */
    private static BatchInFlight.Write runsUntil(
            CountDownLatch running, CountDownLatch mayFinish, List<String> done, String name) {
        return () -> {
            running.countDown();
            mayFinish.await();
            done.add(name);
        };
    }

    /**
     * The message of the failure {@link BatchInFlight#throwIfFailed} throws, polled every 10 ms
     * until the writing thread has failed (null after 10 s).
     */
    private static String failureSeenByPolling(BatchInFlight batches) throws InterruptedException {
        for (int i = 0; i < 1000; i++) {
            try {
                batches.throwIfFailed();
                Thread.sleep(10);
            } catch (IOException e) {
                return e.getMessage();
            }
        }
        return null;
    }

    /**
     * A thread that, 200 ms from now, notes "released" in {@code done} and lets a waiting batch
     * finish.
     */
    private static Thread releaseIn200Millis(CountDownLatch mayFinish, List<String> done) {
        Thread releaser =
                new Thread(
                        () -> {
                            try {
                                Thread.sleep(200);
                            } catch (InterruptedException ignored) {
                            }
                            done.add("released");
                            mayFinish.countDown();
                        });
        releaser.start();
        return releaser;
    }

    @Test
    void theTaskGoesOnWhileABatchIsWrittenAndTheNextBatchWaitsForIt() throws Exception {
        try (BatchInFlight batches = new BatchInFlight("test")) {
            CountDownLatch firstMayFinish = new CountDownLatch(1);
            CountDownLatch firstStarted = new CountDownLatch(1);
            List<String> done = new CopyOnWriteArrayList<>();
            batches.start(runsUntil(firstStarted, firstMayFinish, done, "first"));
            assertTrue(firstStarted.await(10, TimeUnit.SECONDS));
            assertTrue(
                    done.isEmpty(), "start returned while the first batch is still being written");

            Thread releaser =
                    releaseIn200Millis(
                            firstMayFinish, done); // the second start must still be waiting then
            batches.start(() -> done.add("second")); // waits for the first
            List<String> soFar = List.copyOf(done); // the second batch may be adding to it now
            assertTrue(
                    soFar.size() >= 2,
                    "start returned before the first batch was written: " + soFar);
            assertEquals(
                    List.of("released", "first"),
                    soFar.subList(0, 2),
                    "the second started only after the first");
            batches.awaitIdle();
            assertEquals(List.of("released", "first", "second"), done);
            releaser.join();
        }
    }

    @Test
    void theTimeTheTaskWaitsForABatchIsCounted() throws Exception {
        try (BatchInFlight batches = new BatchInFlight("test")) {
            batches.start(() -> Thread.sleep(300));
            batches.awaitIdle();
            long waited = batches.waitedMillis();
            assertTrue(waited >= 250 && waited < 5000, "waited " + waited + " ms");
            batches.awaitIdle(); // nothing in flight: no wait
            assertEquals(waited, batches.waitedMillis());
        }
    }

    @Test
    void theTimeABatchIsBeingWrittenIsCountedWhetherTheTaskWaitsOrNot() throws Exception {
        try (BatchInFlight batches = new BatchInFlight("test")) {
            batches.start(() -> Thread.sleep(300));
            Thread.sleep(400); // the task busy elsewhere: it will not wait for this batch
            batches.start(() -> Thread.sleep(200));
            batches.awaitIdle();
            long writing = batches.writingMillis();
            assertTrue(writing >= 480 && writing < 5000, "writing " + writing + " ms");
            assertTrue(
                    batches.waitedMillis() < writing - 250,
                    "waited " + batches.waitedMillis() + " of " + writing + " ms");
        }
    }

    @Test
    void neverTwoBatchesAtOnceAndAlwaysInTheOrderStarted() throws Exception {
        AtomicInteger running = new AtomicInteger();
        List<Integer> order = new CopyOnWriteArrayList<>();
        try (BatchInFlight batches = new BatchInFlight("test")) {
            for (int i = 0; i < 200; i++) {
                int n = i;
                batches.start(
                        () -> {
                            assertEquals(1, running.incrementAndGet(), "two batches at once");
                            order.add(n);
                            running.decrementAndGet();
                        });
            }
            batches.awaitIdle();
        }
        assertEquals(200, order.size());
        for (int i = 0; i < 200; i++) {
            assertEquals(i, order.get(i));
        }
    }

    @Test
    void withTwoInFlightTwoBatchesRunAtOnceAndAThirdWaitsForTheOldest() throws Exception {
        try (BatchInFlight batches = new BatchInFlight("test", 2)) {
            CountDownLatch bothRunning = new CountDownLatch(2);
            CountDownLatch firstMayFinish = new CountDownLatch(1);
            CountDownLatch secondMayFinish = new CountDownLatch(1);
            List<String> done = new CopyOnWriteArrayList<>();
            batches.start(runsUntil(bothRunning, firstMayFinish, done, "first"));
            batches.start(runsUntil(bothRunning, secondMayFinish, done, "second"));
            assertTrue(
                    bothRunning.await(10, TimeUnit.SECONDS),
                    "the second batch did not start while the first ran");
            Thread releaser =
                    releaseIn200Millis(
                            firstMayFinish, done); // the third start must still be waiting then
            batches.start(() -> done.add("third")); // waits for the oldest, the first
            assertEquals(List.of("released", "first"), List.copyOf(done).subList(0, 2));
            assertFalse(done.contains("second"), "the third waited for the second too");
            secondMayFinish.countDown();
            batches.awaitIdle();
            assertEquals(Set.of("released", "first", "second", "third"), Set.copyOf(done));
            assertEquals(4, done.size());
            releaser.join();
        }
    }

    @Test
    void withTwoInFlightNeverThreeAtOnceAndTheCheckpointWaitsForAll() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        AtomicInteger finished = new AtomicInteger();
        try (BatchInFlight batches = new BatchInFlight("test", 2)) {
            for (int i = 0; i < 200; i++) {
                batches.start(
                        () -> {
                            most.accumulateAndGet(running.incrementAndGet(), Math::max);
                            Thread.sleep(1);
                            running.decrementAndGet();
                            finished.incrementAndGet();
                        });
            }
            batches.awaitIdle();
            assertEquals(
                    200,
                    finished.get(),
                    "the checkpoint's wait returned before every batch was written");
        }
        assertEquals(2, most.get(), "at most two at once, and two did run at once");
    }

    @Test
    void withTwoInFlightTheFailureOfTheNewerIsThrownWhileTheOlderStillRuns() throws Exception {
        CountDownLatch olderMayFinish = new CountDownLatch(1);
        try (BatchInFlight batches = new BatchInFlight("test", 2)) {
            batches.start(olderMayFinish::await);
            batches.start(failing(new IOException("store gone")));
            assertEquals("store gone", failureSeenByPolling(batches));
            olderMayFinish.countDown();
            batches.awaitIdle(); // the older one succeeded; the failure was reported once
        }
    }

    @Test
    void aFailedBatchFailsTheNextStartAndTheCheckpointInTheTasksThread() throws Exception {
        IOException failure = new IOException("writing 1000 documents failed after 10 retries");
        try (BatchInFlight batches = new BatchInFlight("test")) {
            batches.start(failing(failure));
            AtomicInteger ran = new AtomicInteger();
            IOException thrown =
                    assertThrows(IOException.class, () -> batches.start(ran::incrementAndGet));
            assertSame(failure, thrown);
            assertEquals(0, ran.get(), "no batch is written after a failed one");

            batches.start(failing(failure));
            assertSame(
                    failure,
                    assertThrows(IOException.class, batches::awaitIdle),
                    "the checkpoint's wait fails too");
        }
    }

    @Test
    void aRuntimeFailureOfTheDriverIsThrownAsItself() throws Exception {
        IllegalStateException failure = new IllegalStateException("state should be: open");
        try (BatchInFlight batches = new BatchInFlight("test")) {
            batches.start(failing(failure));
            assertSame(failure, assertThrows(IllegalStateException.class, batches::awaitIdle));
        }
    }

    @Test
    void checkingForAFailureDoesNotWaitForARunningBatch() throws Exception {
        CountDownLatch mayFinish = new CountDownLatch(1);
        try (BatchInFlight batches = new BatchInFlight("test")) {
            batches.start(mayFinish::await);
            batches.throwIfFailed(); // returns at once: the batch runs
            mayFinish.countDown();
            batches.awaitIdle();

            batches.start(failing(new IOException("store gone")));
            assertEquals("store gone", failureSeenByPolling(batches));
            batches.awaitIdle(); // reported once
        }
    }

    @Test
    void closingAbandonsABatchThatCannotFinish() throws Exception {
        CountDownLatch never = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        BatchInFlight batches = new BatchInFlight("test");
        batches.start(
                () -> {
                    started.countDown();
                    never.await(); // a write retrying against a store that is gone
                });
        assertTrue(started.await(10, TimeUnit.SECONDS));
        long before = System.nanoTime();
        batches.close(); // interrupts it
        assertFalse(
                TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - before) >= 10,
                "close did not hang");
    }

    /** A write that fails with {@code failure}: an IOException or a RuntimeException. */
    private static BatchInFlight.Write failing(Exception failure) {
        return () -> {
            if (failure instanceof IOException e) throw e;
            throw (RuntimeException) failure;
        };
    }
}

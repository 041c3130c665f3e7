package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.document.EventDocument;
import io.auditpipe.flink.functions.WriteBackOperator;
import io.auditpipe.flink.records.IngestedEvent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The links' MAC: the same vector is in tests/unit/evidence/test_chain.py, which the verifier must
 * match.
 */
class LinkKeyTest {
    static final String KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f";
    static final String DIGEST = "2360ea144295777db0366420633febcc8d745d532dec04b3153e0c1c26c8457e";

    @Test
    void theMacMatchesTheVerifiersVector(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("links.key");
        Files.writeString(file, "# the first key links\n\n" + KEY + "\n" + "ff".repeat(32) + "\n");
        LinkKey key = LinkKey.load(file);
        assertEquals("841f167ca0676b5f01522e6ad60f7788", key.mac(1, DIGEST));
        assertEquals(key.mac(1, DIGEST), key.mac(1, DIGEST), "the Mac is reset after each link");
        assertNotEquals(key.mac(1, DIGEST), key.mac(2, DIGEST), "the link's number is covered");
        assertEquals(16, key.keyId().length());
    }

    @Test
    void theChainGivesEachLinkItsMacInTheEventAndItsDocument(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("links.key");
        Files.writeString(file, KEY + "\n");
        var harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new WriteBackOperator<>(
                                new ChainEvents(
                                        Duration.ofMinutes(1),
                                        Duration.ofMinutes(2),
                                        Duration.ofMinutes(1),
                                        null,
                                        new ChainKeys(null, file.toString()),
                                        false)),
                        new ServerOfEvent(),
                        Types.STRING);
        harness.open();
        harness.processElement(ChainEventsTest.event("db-01/1", 1_000, 0));
        harness.processElement(ChainEventsTest.event("db-01/2", 2_000, 1));
        List<IngestedEvent> out = harness.extractOutputValues();
        harness.close();
        LinkKey key = LinkKey.load(file);
        assertEquals(2, out.size());
        for (IngestedEvent e : out) {
            assertEquals(key.mac(e.chainSeq, e.chainDigest), e.chainMac);
            assertEquals(
                    e.chainMac,
                    EventDocument.of(e).get(EventDocument.MAC_FIELD),
                    "after a shuffle too");
            assertEquals(
                    EventChain.link(
                            e.chainSeq == 1 ? "" : out.get(0).chainDigest, EventDocument.of(e)),
                    e.chainDigest,
                    "the digest does not cover the MAC");
        }
    }

    @Test
    void aBadKeyFileIsNamedWithItsReason(@TempDir Path dir) throws Exception {
        Path shortKey = dir.resolve("short.key");
        Files.writeString(shortKey, "abcd\n");
        assertTrue(
                assertThrows(IllegalArgumentException.class, () -> LinkKey.load(shortKey))
                        .getMessage()
                        .contains("chain.link-key-file: " + shortKey));
        Path empty = dir.resolve("empty.key");
        Files.writeString(empty, "# nothing\n");
        assertTrue(
                assertThrows(IllegalArgumentException.class, () -> LinkKey.load(empty))
                        .getMessage()
                        .contains("holds no key"));
        assertThrows(IllegalArgumentException.class, () -> LinkKey.load(dir.resolve("absent.key")));
    }
}

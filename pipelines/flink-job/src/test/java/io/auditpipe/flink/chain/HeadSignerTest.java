package io.auditpipe.flink.chain;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.auditpipe.flink.sink.StoreDocuments;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.stream.Collectors;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.bson.Document;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HeadSigner}: the bytes a signature covers (the vector
 * tests/unit/evidence/test_integrity.py shares), and {@link ChainEvents} signing each head and
 * naming the one before it.
 */
class HeadSignerTest {
    /** The same head and bytes as tests/unit/evidence/test_integrity.py's vector. */
    static ChainHead vectorHead() {
        ChainHead h =
                new ChainHead(
                        "db-01",
                        42,
                        "ab".repeat(32),
                        "db-01/1700000000_7",
                        1_700_000_000_123L,
                        1_700_000_060_000L);
        h.chain = "import-ü";
        h.previousSeq = 17L;
        return h;
    }

    static final String VECTOR =
            "22:auditpipe-chain-head/1,5:db-01,9:import-ü,2:42,2:17,64:"
                    + "ab".repeat(32)
                    + ",18:db-01/1700000000_7,13:1700000000123,13:1700000060000,";

    @Test
    void signsTheFieldsAsLengthPrefixedUtf8() {
        assertArrayEquals(
                VECTOR.getBytes(StandardCharsets.UTF_8), HeadSigner.signedBytes(vectorHead()));
        ChainHead first = vectorHead();
        first.chain = null;
        first.previousSeq = null;
        assertTrue(
                new String(HeadSigner.signedBytes(first), StandardCharsets.UTF_8)
                        .startsWith("22:auditpipe-chain-head/1,5:db-01,0:,2:42,0:,64:"));
    }

    static Path keyFile(Path dir, KeyPair pair) throws Exception {
        Path file = dir.resolve("chain-signing.pem");
        Base64.Encoder b64 = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII));
        Files.writeString(
                file,
                "-----BEGIN PRIVATE KEY-----\n"
                        + b64.encodeToString(pair.getPrivate().getEncoded())
                        + "\n-----END PRIVATE KEY-----\n-----BEGIN PUBLIC KEY-----\n"
                        + b64.encodeToString(pair.getPublic().getEncoded())
                        + "\n-----END PUBLIC KEY-----\n");
        return file;
    }

    @Test
    void refusesAFileWithoutAMatchingPair(@TempDir Path dir) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("Ed25519");
        KeyPair a = g.generateKeyPair();
        KeyPair b = g.generateKeyPair();
        Path mixed = keyFile(dir, new KeyPair(b.getPublic(), a.getPrivate()));
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> HeadSigner.load(mixed));
        assertTrue(e.getMessage().contains("not the private key's"), e.getMessage());
        Path empty = Files.writeString(dir.resolve("empty.pem"), "nothing");
        assertTrue(
                assertThrows(IllegalArgumentException.class, () -> HeadSigner.load(empty))
                        .getMessage()
                        .contains("chain.signing-key-file"));
        assertThrows(
                IllegalArgumentException.class, () -> HeadSigner.load(dir.resolve("absent.pem")));
    }

    @Test
    void theChainSignsEachHeadAndNamesTheOneBefore(@TempDir Path dir) throws Exception {
        KeyPair pair = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        Path file = keyFile(dir, pair);
        Duration interval = Duration.ofMinutes(1);
        var harness =
                new KeyedOneInputStreamOperatorTestHarness<>(
                        new io.auditpipe.flink.functions.WriteBackOperator<>(
                                new ChainEvents(
                                        Duration.ofMinutes(1),
                                        Duration.ofMinutes(2),
                                        interval,
                                        null,
                                        new ChainKeys(file.toString(), null),
                                        false)),
                        new ServerOfEvent(),
                        org.apache.flink.api.common.typeinfo.Types.STRING);
        harness.open();
        harness.setProcessingTime(0);
        harness.processElement(ChainEventsTest.event("db-01/1", 1_000, 0));
        harness.setProcessingTime(interval.toMillis());
        harness.processElement(ChainEventsTest.event("db-01/2", 2_000, 1));
        harness.processElement(ChainEventsTest.event("db-01/3", 3_000, 2));
        harness.setProcessingTime(2 * interval.toMillis());
        List<ChainHead> heads =
                harness.getSideOutput(ChainEvents.HEADS).stream()
                        .map(r -> r.getValue())
                        .collect(Collectors.toList());
        harness.close();
        assertEquals(List.of(1L, 3L), heads.stream().map(h -> h.seq).collect(Collectors.toList()));
        assertNull(heads.get(0).previousSeq, "a chain's first head");
        assertEquals(1L, heads.get(1).previousSeq);
        Signature verify = Signature.getInstance("Ed25519");
        for (ChainHead h : heads) {
            assertEquals(HeadSigner.keyId(pair.getPublic()), h.keyId);
            verify.initVerify(pair.getPublic());
            verify.update(HeadSigner.signedBytes(h));
            assertTrue(verify.verify(Base64.getDecoder().decode(h.signature)), h.toString());
        }
        ChainHead edited = heads.get(1);
        edited.digest = "00".repeat(32);
        verify.initVerify(pair.getPublic());
        verify.update(HeadSigner.signedBytes(edited));
        assertFalse(
                verify.verify(Base64.getDecoder().decode(edited.signature)),
                "a changed head no longer verifies");

        Document stored = StoreDocuments.chainHead(heads.get(1));
        assertEquals(1L, stored.getLong("previous_seq"));
        assertEquals(heads.get(1).signature, stored.getString("signature"));
        assertEquals(heads.get(1).keyId, stored.getString("key_id"));
        assertFalse(StoreDocuments.chainHead(heads.get(0)).containsKey("previous_seq"));
    }
}

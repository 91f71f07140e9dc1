// A platform team's Java client of the generated package io.vancetope.vance.v1 (`make clients`,
// clients/java): it logs in at the gateway, then calls SessionService with the documented
// metadata `authorization: Bearer <token>`. It prints one JSON object with what it saw;
// tests/test_java_client.py checks it.
//
// The wildcard import puts every generated type next to java.lang's: the outer classes are
// named XxxProto (java_outer_classname), so none of them is `Process` and `Process` below is
// java.lang.Process without qualification.

import io.grpc.ManagedChannel;
import io.grpc.ManagedChannelBuilder;
import io.grpc.Metadata;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.MetadataUtils;
import io.vancetope.vance.v1.*;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class VanceClient {
  private VanceClient() {}

  static String login(String gateway, String tenant, String user, String password)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://" + gateway + "/brain/" + tenant + "/access/" + user))
            .header("content-type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"password\": \"" + password + "\"}"))
            .build();
    String body =
        HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString()).body();
    Matcher token = Pattern.compile("\"token\"\\s*:\\s*\"([^\"]+)\"").matcher(body);
    if (!token.find()) {
      throw new IllegalStateException("no token in " + body);
    }
    return token.group(1);
  }

  public static void main(String[] args) throws Exception {
    String gateway = args[0];
    String sessions = args[1];
    // java.lang.Process, unqualified, beside the generated package.
    Process self = new ProcessBuilder("true").start();
    int exit = self.waitFor();

    String token = login(gateway, "default", "dev", "dev");
    Metadata headers = new Metadata();
    headers.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
    ManagedChannel channel = ManagedChannelBuilder.forTarget(sessions).usePlaintext().build();
    try {
      SessionServiceGrpc.SessionServiceBlockingStub client =
          SessionServiceGrpc.newBlockingStub(channel)
              .withInterceptors(MetadataUtils.newAttachHeadersInterceptor(headers))
              .withDeadlineAfter(30, TimeUnit.SECONDS);
      Session created =
          client.createSession(
              CreateSessionRequest.newBuilder()
                  .setTenantId("default")
                  .setProjectId("demo")
                  .setOwnerUserId("dev")
                  .setAutonomous(true)
                  .build());
      ListSessionsResponse listed =
          client.listSessions(ListSessionsRequest.newBuilder().setTenantId("default").build());
      boolean found =
          listed.getSessionsList().stream()
              .anyMatch(s -> s.getSessionId().equals(created.getSessionId()));
      String otherTenant = "OK";
      try {
        client.listSessions(ListSessionsRequest.newBuilder().setTenantId("elsewhere").build());
      } catch (StatusRuntimeException refused) {
        otherTenant = refused.getStatus().getCode().name();
      }
      System.out.println(
          "{\"created\": \"" + created.getSessionId() + "\", \"listed\": " + found
              + ", \"other_tenant\": \"" + otherTenant + "\", \"process_exit\": " + exit + "}");
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }
  }
}

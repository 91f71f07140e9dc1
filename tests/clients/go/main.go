// A platform team's client of the generated Go module github.com/vancetope/vance/clients/go
// (`make clients`, see README.md): it logs in at the gateway, then calls the gRPC API with the
// documented metadata `authorization: Bearer <token>`.
// It prints one JSON object with what it saw; tests/test_go_client.py checks it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"time"

	vancev1 "github.com/vancetope/vance/clients/go/vance/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

func login(gateway, tenant, user, password string) (string, error) {
	body, _ := json.Marshal(map[string]string{"password": password})
	url := fmt.Sprintf("http://%s/brain/%s/access/%s", gateway, tenant, user)
	resp, err := http.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", err
	}
	return out.Token, nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func main() {
	gateway := flag.String("gateway", "127.0.0.1:8080", "gateway host:port")
	sessions := flag.String("sessions", "127.0.0.1:50051", "session_service host:port")
	tenant := flag.String("tenant", "default", "tenant")
	user := flag.String("user", "dev", "user")
	password := flag.String("password", "dev", "password")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := grpc.NewClient(*sessions, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		fail(err)
	}
	defer conn.Close()
	client := vancev1.NewSessionServiceClient(conn)
	result := map[string]any{}

	// Without credentials: refused.
	_, err = client.ListSessions(ctx, &vancev1.ListSessionsRequest{TenantId: *tenant})
	result["without_token"] = status.Code(err).String()

	token, err := login(*gateway, *tenant, *user, *password)
	if err != nil {
		fail(err)
	}
	authed := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+token)
	created, err := client.CreateSession(authed, &vancev1.CreateSessionRequest{
		TenantId: *tenant, ProjectId: "demo", OwnerUserId: *user, Autonomous: true,
	})
	if err != nil {
		fail(err)
	}
	result["created"] = created.GetSessionId()
	listed, err := client.ListSessions(authed, &vancev1.ListSessionsRequest{TenantId: *tenant})
	if err != nil {
		fail(err)
	}
	found := false
	for _, s := range listed.GetSessions() {
		found = found || s.GetSessionId() == created.GetSessionId()
	}
	result["listed"] = found
	// A body naming another tenant is refused with the token's rights.
	var trailer metadata.MD
	_, err = client.ListSessions(
		authed, &vancev1.ListSessionsRequest{TenantId: "elsewhere"}, grpc.Trailer(&trailer))
	result["other_tenant"] = status.Code(err).String()
	if status.Code(err) == codes.OK {
		result["other_tenant"] = "OK"
	}
	// Why it was refused, as gRPC's richer error model carries it (google.rpc.ErrorInfo in
	// grpc-status-details-bin), and as the older `vance-reason` trailer does.
	result["error_info_reason"] = ""
	result["error_info_domain"] = ""
	for _, detail := range status.Convert(err).Details() {
		if info, ok := detail.(*errdetails.ErrorInfo); ok {
			result["error_info_reason"] = info.GetReason()
			result["error_info_domain"] = info.GetDomain()
		}
	}
	result["vance_reason"] = ""
	if reasons := trailer.Get("vance-reason"); len(reasons) > 0 {
		result["vance_reason"] = reasons[0]
	}
	out, _ := json.Marshal(result)
	fmt.Println(string(out))
}

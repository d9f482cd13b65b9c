package client

import (
	"encoding/json"
	"time"

	"github.com/durabox/durabox/engine"
)

// The wire types: the JSON bodies of the HTTP API, shared by the server
// (host.NewHandler) and this client.

// Module is a deployed module.
type Module struct {
	// Hash is the hex sha256 of the module's bytes; it identifies the module.
	Hash string `json:"hash"`
	// Orchestrations and Activities are the names the module registers.
	Orchestrations []string `json:"orchestrations"`
	Activities     []string `json:"activities"`
	// EnvKeys names the environment variables its activities see (their
	// values stay on the host).
	EnvKeys    []string  `json:"envKeys,omitempty"`
	DeployedAt time.Time `json:"deployedAt"`
}

// Instance is an orchestration instance as it stands.
type Instance struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// ModuleHash is the module the instance started with and runs on.
	ModuleHash  string          `json:"moduleHash"`
	ExecutionID int64           `json:"executionId"`
	Status      engine.Status   `json:"status"`
	Input       json.RawMessage `json:"input"`
	// Result is set once the instance has completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Failure is set once the instance has failed.
	Failure *engine.Failure `json:"failure,omitempty"`
	// CustomStatus is the status text the orchestration set last.
	CustomStatus string    `json:"customStatus,omitempty"`
	CreatedAt    time.Time `json:"createdAt"`
	UpdatedAt    time.Time `json:"updatedAt"`
}

// StartRequest is the body of POST /v1/instances.
type StartRequest struct {
	// Name is the orchestration to start. Required.
	Name string `json:"name"`
	// Input is the orchestration's input. Empty means JSON null.
	Input json.RawMessage `json:"input,omitempty"`
	// ID is the new instance's id. Empty means the host picks one.
	ID string `json:"id,omitempty"`
	// Module is the module to start it on: a hash or a unique prefix of
	// one, which must register Name. Empty means the newest module that
	// registers Name.
	Module string `json:"module,omitempty"`
}

// RaiseRequest is the body of POST /v1/instances/{id}/events, answered with
// 202 Accepted and the request as the host took it.
type RaiseRequest struct {
	// Name is the event's name. Required.
	Name string `json:"name"`
	// Data is the event's data. Empty means JSON null.
	Data json.RawMessage `json:"data,omitempty"`
	// Persistent raises a persistent event (kept until a persistent wait
	// takes it) rather than a positional one.
	Persistent bool `json:"persistent,omitempty"`
}

// CancelRequest is the (optional) body of POST /v1/instances/{id}/cancel,
// answered with 202 Accepted and the request as the host took it.
type CancelRequest struct {
	// Reason says why, for the orchestration and its history.
	Reason string `json:"reason,omitempty"`
}

// StartResponse is the answer to POST /v1/instances.
type StartResponse struct {
	ID string `json:"id"`
}

// PurgeResponse is the answer to DELETE /v1/instances/{id}: the id of the
// instance purged.
type PurgeResponse struct {
	ID string `json:"id"`
}

// ModulesResponse is the answer to GET /v1/modules, newest first.
type ModulesResponse struct {
	Modules []Module `json:"modules"`
}

// InstancesResponse is the answer to GET /v1/instances, newest first.
type InstancesResponse struct {
	Instances []Instance `json:"instances"`
}

// HistoryResponse is the answer to GET /v1/instances/{id}/history: the
// history of the instance's current execution, oldest first.
type HistoryResponse struct {
	Events []engine.Event `json:"events"`
}

// ErrorResponse is the body of every answer with a 4xx or 5xx status.
type ErrorResponse struct {
	Error string `json:"error"`
}

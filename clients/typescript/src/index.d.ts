// The generated vance.v1 messages and services (src/gen, `make clients`), in one module.
export * from "./gen/vance/v1/common_pb.js";
export * from "./gen/vance/v1/process_pb.js";
export * from "./gen/vance/v1/recipe_pb.js";
export * from "./gen/vance/v1/session_pb.js";
export * from "./gen/vance/v1/tokens_pb.js";
export * from "./gen/vance/v1/work_pb.js";

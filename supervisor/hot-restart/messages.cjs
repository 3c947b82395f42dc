// Generated from messages.proto by scripts/generate-hot-restart-messages.mjs (protobufjs-cli's
// static target): do not edit; change the .proto and run `npm run generate`.
/*eslint-disable block-scoped-var, id-length, no-control-regex, no-magic-numbers, no-prototype-builtins, no-redeclare, no-shadow, no-var, sort-vars*/
"use strict";

var $protobuf = require("protobufjs/minimal.js");

var $Reader = $protobuf.Reader, $Writer = $protobuf.Writer, $util = $protobuf.util;

var $root = $protobuf.roots["hot_restart"] || ($protobuf.roots["hot_restart"] = {});

$root.proxy = (function() {

    var proxy = {};

    proxy.hot_restart = (function() {

        var hot_restart = {};

        hot_restart.HotRestartMessage = (function() {

            function HotRestartMessage(properties) {
                if (properties)
                    for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                        if (properties[keys[i]] != null && keys[i] !== "__proto__")
                            this[keys[i]] = properties[keys[i]];
            }

            HotRestartMessage.prototype.request = null;
            HotRestartMessage.prototype.reply = null;
            HotRestartMessage.prototype.didnt_recognize_your_last_message = false;

            var $oneOfFields;

            Object.defineProperty(HotRestartMessage.prototype, "requestreply", {
                get: $util.oneOfGetter($oneOfFields = ["request", "reply"]),
                set: $util.oneOfSetter($oneOfFields)
            });

            HotRestartMessage.create = function create(properties) {
                return new HotRestartMessage(properties);
            };

            HotRestartMessage.encode = function encode(message, writer, q) {
                if (!writer)
                    writer = $Writer.create();
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                if (message.request != null && Object.hasOwnProperty.call(message, "request"))
                    $root.proxy.hot_restart.HotRestartMessage.Request.encode(message.request, writer.uint32(10).fork(), q + 1).ldelim();
                if (message.reply != null && Object.hasOwnProperty.call(message, "reply"))
                    $root.proxy.hot_restart.HotRestartMessage.Reply.encode(message.reply, writer.uint32(18).fork(), q + 1).ldelim();
                if (message.didnt_recognize_your_last_message != null && Object.hasOwnProperty.call(message, "didnt_recognize_your_last_message"))
                    writer.uint32(24).bool(message.didnt_recognize_your_last_message);
                return writer;
            };

            HotRestartMessage.decode = function decode(reader, length, error, long) {
                if (!(reader instanceof $Reader))
                    reader = $Reader.create(reader);
                if (long === undefined)
                    long = 0;
                if (long > $Reader.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var end, message;
                if (length === undefined)
                    end = reader.len;
                else {
                    end = reader.pos + length;
                    if (end > reader.len)
                        throw RangeError("index out of range");
                    length = reader.len;
                    reader.len = end;
                }
                message = new $root.proxy.hot_restart.HotRestartMessage();
                while (reader.pos < end) {
                    var tag = reader.uint32();
                    if (tag === error)
                        break;
                    switch (tag >>> 3) {
                    case 1: {
                            message.request = $root.proxy.hot_restart.HotRestartMessage.Request.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 2: {
                            message.reply = $root.proxy.hot_restart.HotRestartMessage.Reply.decode(reader, reader.uint32(), undefined, long + 1);
                            break;
                        }
                    case 3: {
                            message.didnt_recognize_your_last_message = reader.bool();
                            break;
                        }
                    default:
                        reader.skipType(tag & 7, long);
                        break;
                    }
                }
                if (length !== undefined) {
                    if (reader.pos !== end)
                        throw RangeError("index out of range");
                    reader.len = length;
                }
                return message;
            };

            HotRestartMessage.fromObject = function fromObject(object, long) {
                if (object instanceof $root.proxy.hot_restart.HotRestartMessage)
                    return object;
                if (!$util.isObject(object))
                    throw TypeError(".proxy.hot_restart.HotRestartMessage: object expected");
                if (long === undefined)
                    long = 0;
                if (long > $util.recursionLimit)
                    throw Error("maximum nesting depth exceeded");
                var message = new $root.proxy.hot_restart.HotRestartMessage();
                if (object.request != null) {
                    if (!$util.isObject(object.request))
                        throw TypeError(".proxy.hot_restart.HotRestartMessage.request: object expected");
                    message.request = $root.proxy.hot_restart.HotRestartMessage.Request.fromObject(object.request, long + 1);
                }
                if (object.reply != null) {
                    if (!$util.isObject(object.reply))
                        throw TypeError(".proxy.hot_restart.HotRestartMessage.reply: object expected");
                    message.reply = $root.proxy.hot_restart.HotRestartMessage.Reply.fromObject(object.reply, long + 1);
                }
                if (object.didnt_recognize_your_last_message != null)
                    message.didnt_recognize_your_last_message = Boolean(object.didnt_recognize_your_last_message);
                return message;
            };

            HotRestartMessage.toObject = function toObject(message, options, q) {
                if (!options)
                    options = {};
                if (q === undefined)
                    q = 0;
                if (q > $util.recursionLimit)
                    throw Error("max depth exceeded");
                var object = {};
                if (options.defaults)
                    object.didnt_recognize_your_last_message = false;
                if (message.request != null && Object.hasOwnProperty.call(message, "request")) {
                    object.request = $root.proxy.hot_restart.HotRestartMessage.Request.toObject(message.request, options, q + 1);
                    if (options.oneofs)
                        object.requestreply = "request";
                }
                if (message.reply != null && Object.hasOwnProperty.call(message, "reply")) {
                    object.reply = $root.proxy.hot_restart.HotRestartMessage.Reply.toObject(message.reply, options, q + 1);
                    if (options.oneofs)
                        object.requestreply = "reply";
                }
                if (message.didnt_recognize_your_last_message != null && Object.hasOwnProperty.call(message, "didnt_recognize_your_last_message"))
                    object.didnt_recognize_your_last_message = message.didnt_recognize_your_last_message;
                return object;
            };

            HotRestartMessage.prototype.toJSON = function toJSON() {
                return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
            };

            HotRestartMessage.Request = (function() {

                function Request(properties) {
                    if (properties)
                        for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                            if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                this[keys[i]] = properties[keys[i]];
                }

                Request.prototype.pass_listen_socket = null;
                Request.prototype.shutdown_admin = null;
                Request.prototype.stats = null;
                Request.prototype.drain_listeners = null;
                Request.prototype.terminate = null;
                Request.prototype.test_connection = null;
                Request.prototype.configuration = null;

                var $oneOfFields;

                Object.defineProperty(Request.prototype, "request", {
                    get: $util.oneOfGetter($oneOfFields = ["pass_listen_socket", "shutdown_admin", "stats", "drain_listeners", "terminate", "test_connection", "configuration"]),
                    set: $util.oneOfSetter($oneOfFields)
                });

                Request.create = function create(properties) {
                    return new Request(properties);
                };

                Request.encode = function encode(message, writer, q) {
                    if (!writer)
                        writer = $Writer.create();
                    if (q === undefined)
                        q = 0;
                    if (q > $util.recursionLimit)
                        throw Error("max depth exceeded");
                    if (message.pass_listen_socket != null && Object.hasOwnProperty.call(message, "pass_listen_socket"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket.encode(message.pass_listen_socket, writer.uint32(10).fork(), q + 1).ldelim();
                    if (message.shutdown_admin != null && Object.hasOwnProperty.call(message, "shutdown_admin"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin.encode(message.shutdown_admin, writer.uint32(18).fork(), q + 1).ldelim();
                    if (message.stats != null && Object.hasOwnProperty.call(message, "stats"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.Stats.encode(message.stats, writer.uint32(26).fork(), q + 1).ldelim();
                    if (message.drain_listeners != null && Object.hasOwnProperty.call(message, "drain_listeners"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners.encode(message.drain_listeners, writer.uint32(34).fork(), q + 1).ldelim();
                    if (message.terminate != null && Object.hasOwnProperty.call(message, "terminate"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.Terminate.encode(message.terminate, writer.uint32(42).fork(), q + 1).ldelim();
                    if (message.test_connection != null && Object.hasOwnProperty.call(message, "test_connection"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection.encode(message.test_connection, writer.uint32(58).fork(), q + 1).ldelim();
                    if (message.configuration != null && Object.hasOwnProperty.call(message, "configuration"))
                        $root.proxy.hot_restart.HotRestartMessage.Request.Configuration.encode(message.configuration, writer.uint32(66).fork(), q + 1).ldelim();
                    return writer;
                };

                Request.decode = function decode(reader, length, error, long) {
                    if (!(reader instanceof $Reader))
                        reader = $Reader.create(reader);
                    if (long === undefined)
                        long = 0;
                    if (long > $Reader.recursionLimit)
                        throw Error("maximum nesting depth exceeded");
                    var end, message;
                    if (length === undefined)
                        end = reader.len;
                    else {
                        end = reader.pos + length;
                        if (end > reader.len)
                            throw RangeError("index out of range");
                        length = reader.len;
                        reader.len = end;
                    }
                    message = new $root.proxy.hot_restart.HotRestartMessage.Request();
                    while (reader.pos < end) {
                        var tag = reader.uint32();
                        if (tag === error)
                            break;
                        switch (tag >>> 3) {
                        case 1: {
                                message.pass_listen_socket = $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 2: {
                                message.shutdown_admin = $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 3: {
                                message.stats = $root.proxy.hot_restart.HotRestartMessage.Request.Stats.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 4: {
                                message.drain_listeners = $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 5: {
                                message.terminate = $root.proxy.hot_restart.HotRestartMessage.Request.Terminate.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 7: {
                                message.test_connection = $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 8: {
                                message.configuration = $root.proxy.hot_restart.HotRestartMessage.Request.Configuration.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        default:
                            reader.skipType(tag & 7, long);
                            break;
                        }
                    }
                    if (length !== undefined) {
                        if (reader.pos !== end)
                            throw RangeError("index out of range");
                        reader.len = length;
                    }
                    return message;
                };

                Request.fromObject = function fromObject(object, long) {
                    if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request)
                        return object;
                    if (!$util.isObject(object))
                        throw TypeError(".proxy.hot_restart.HotRestartMessage.Request: object expected");
                    if (long === undefined)
                        long = 0;
                    if (long > $util.recursionLimit)
                        throw Error("maximum nesting depth exceeded");
                    var message = new $root.proxy.hot_restart.HotRestartMessage.Request();
                    if (object.pass_listen_socket != null) {
                        if (!$util.isObject(object.pass_listen_socket))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.pass_listen_socket: object expected");
                        message.pass_listen_socket = $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket.fromObject(object.pass_listen_socket, long + 1);
                    }
                    if (object.shutdown_admin != null) {
                        if (!$util.isObject(object.shutdown_admin))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.shutdown_admin: object expected");
                        message.shutdown_admin = $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin.fromObject(object.shutdown_admin, long + 1);
                    }
                    if (object.stats != null) {
                        if (!$util.isObject(object.stats))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.stats: object expected");
                        message.stats = $root.proxy.hot_restart.HotRestartMessage.Request.Stats.fromObject(object.stats, long + 1);
                    }
                    if (object.drain_listeners != null) {
                        if (!$util.isObject(object.drain_listeners))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.drain_listeners: object expected");
                        message.drain_listeners = $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners.fromObject(object.drain_listeners, long + 1);
                    }
                    if (object.terminate != null) {
                        if (!$util.isObject(object.terminate))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.terminate: object expected");
                        message.terminate = $root.proxy.hot_restart.HotRestartMessage.Request.Terminate.fromObject(object.terminate, long + 1);
                    }
                    if (object.test_connection != null) {
                        if (!$util.isObject(object.test_connection))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.test_connection: object expected");
                        message.test_connection = $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection.fromObject(object.test_connection, long + 1);
                    }
                    if (object.configuration != null) {
                        if (!$util.isObject(object.configuration))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.configuration: object expected");
                        message.configuration = $root.proxy.hot_restart.HotRestartMessage.Request.Configuration.fromObject(object.configuration, long + 1);
                    }
                    return message;
                };

                Request.toObject = function toObject(message, options, q) {
                    if (!options)
                        options = {};
                    if (q === undefined)
                        q = 0;
                    if (q > $util.recursionLimit)
                        throw Error("max depth exceeded");
                    var object = {};
                    if (message.pass_listen_socket != null && Object.hasOwnProperty.call(message, "pass_listen_socket")) {
                        object.pass_listen_socket = $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket.toObject(message.pass_listen_socket, options, q + 1);
                        if (options.oneofs)
                            object.request = "pass_listen_socket";
                    }
                    if (message.shutdown_admin != null && Object.hasOwnProperty.call(message, "shutdown_admin")) {
                        object.shutdown_admin = $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin.toObject(message.shutdown_admin, options, q + 1);
                        if (options.oneofs)
                            object.request = "shutdown_admin";
                    }
                    if (message.stats != null && Object.hasOwnProperty.call(message, "stats")) {
                        object.stats = $root.proxy.hot_restart.HotRestartMessage.Request.Stats.toObject(message.stats, options, q + 1);
                        if (options.oneofs)
                            object.request = "stats";
                    }
                    if (message.drain_listeners != null && Object.hasOwnProperty.call(message, "drain_listeners")) {
                        object.drain_listeners = $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners.toObject(message.drain_listeners, options, q + 1);
                        if (options.oneofs)
                            object.request = "drain_listeners";
                    }
                    if (message.terminate != null && Object.hasOwnProperty.call(message, "terminate")) {
                        object.terminate = $root.proxy.hot_restart.HotRestartMessage.Request.Terminate.toObject(message.terminate, options, q + 1);
                        if (options.oneofs)
                            object.request = "terminate";
                    }
                    if (message.test_connection != null && Object.hasOwnProperty.call(message, "test_connection")) {
                        object.test_connection = $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection.toObject(message.test_connection, options, q + 1);
                        if (options.oneofs)
                            object.request = "test_connection";
                    }
                    if (message.configuration != null && Object.hasOwnProperty.call(message, "configuration")) {
                        object.configuration = $root.proxy.hot_restart.HotRestartMessage.Request.Configuration.toObject(message.configuration, options, q + 1);
                        if (options.oneofs)
                            object.request = "configuration";
                    }
                    return object;
                };

                Request.prototype.toJSON = function toJSON() {
                    return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                };

                Request.PassListenSocket = (function() {

                    function PassListenSocket(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    PassListenSocket.prototype.address = "";
                    PassListenSocket.prototype.worker_index = 0;
                    PassListenSocket.prototype.listener_name = "";

                    PassListenSocket.create = function create(properties) {
                        return new PassListenSocket(properties);
                    };

                    PassListenSocket.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                            writer.uint32(10).string(message.address);
                        if (message.worker_index != null && Object.hasOwnProperty.call(message, "worker_index"))
                            writer.uint32(16).uint32(message.worker_index);
                        if (message.listener_name != null && Object.hasOwnProperty.call(message, "listener_name"))
                            writer.uint32(34).string(message.listener_name);
                        return writer;
                    };

                    PassListenSocket.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.address = reader.string();
                                    break;
                                }
                            case 2: {
                                    message.worker_index = reader.uint32();
                                    break;
                                }
                            case 4: {
                                    message.listener_name = reader.string();
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    PassListenSocket.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.PassListenSocket: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Request.PassListenSocket();
                        if (object.address != null)
                            message.address = String(object.address);
                        if (object.worker_index != null)
                            message.worker_index = object.worker_index >>> 0;
                        if (object.listener_name != null)
                            message.listener_name = String(object.listener_name);
                        return message;
                    };

                    PassListenSocket.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.defaults) {
                            object.address = "";
                            object.worker_index = 0;
                            object.listener_name = "";
                        }
                        if (message.address != null && Object.hasOwnProperty.call(message, "address"))
                            object.address = message.address;
                        if (message.worker_index != null && Object.hasOwnProperty.call(message, "worker_index"))
                            object.worker_index = message.worker_index;
                        if (message.listener_name != null && Object.hasOwnProperty.call(message, "listener_name"))
                            object.listener_name = message.listener_name;
                        return object;
                    };

                    PassListenSocket.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return PassListenSocket;
                })();

                Request.ShutdownAdmin = (function() {

                    function ShutdownAdmin(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    ShutdownAdmin.prototype.child_pid = 0;

                    ShutdownAdmin.create = function create(properties) {
                        return new ShutdownAdmin(properties);
                    };

                    ShutdownAdmin.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.child_pid != null && Object.hasOwnProperty.call(message, "child_pid"))
                            writer.uint32(8).uint32(message.child_pid);
                        return writer;
                    };

                    ShutdownAdmin.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.child_pid = reader.uint32();
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    ShutdownAdmin.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Request.ShutdownAdmin();
                        if (object.child_pid != null)
                            message.child_pid = object.child_pid >>> 0;
                        return message;
                    };

                    ShutdownAdmin.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.defaults)
                            object.child_pid = 0;
                        if (message.child_pid != null && Object.hasOwnProperty.call(message, "child_pid"))
                            object.child_pid = message.child_pid;
                        return object;
                    };

                    ShutdownAdmin.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return ShutdownAdmin;
                })();

                Request.Stats = (function() {

                    function Stats(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    Stats.create = function create(properties) {
                        return new Stats(properties);
                    };

                    Stats.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        return writer;
                    };

                    Stats.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.Stats();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    Stats.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.Stats)
                            return object;
                        return new $root.proxy.hot_restart.HotRestartMessage.Request.Stats();
                    };

                    Stats.toObject = function toObject() {
                        return {};
                    };

                    Stats.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return Stats;
                })();

                Request.DrainListeners = (function() {

                    function DrainListeners(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    DrainListeners.create = function create(properties) {
                        return new DrainListeners(properties);
                    };

                    DrainListeners.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        return writer;
                    };

                    DrainListeners.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    DrainListeners.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners)
                            return object;
                        return new $root.proxy.hot_restart.HotRestartMessage.Request.DrainListeners();
                    };

                    DrainListeners.toObject = function toObject() {
                        return {};
                    };

                    DrainListeners.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return DrainListeners;
                })();

                Request.Terminate = (function() {

                    function Terminate(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    Terminate.create = function create(properties) {
                        return new Terminate(properties);
                    };

                    Terminate.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        return writer;
                    };

                    Terminate.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.Terminate();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    Terminate.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.Terminate)
                            return object;
                        return new $root.proxy.hot_restart.HotRestartMessage.Request.Terminate();
                    };

                    Terminate.toObject = function toObject() {
                        return {};
                    };

                    Terminate.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return Terminate;
                })();

                Request.TestConnection = (function() {

                    function TestConnection(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    TestConnection.create = function create(properties) {
                        return new TestConnection(properties);
                    };

                    TestConnection.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        return writer;
                    };

                    TestConnection.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    TestConnection.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection)
                            return object;
                        return new $root.proxy.hot_restart.HotRestartMessage.Request.TestConnection();
                    };

                    TestConnection.toObject = function toObject() {
                        return {};
                    };

                    TestConnection.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return TestConnection;
                })();

                Request.Configuration = (function() {

                    function Configuration(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    Configuration.prototype.build = "";
                    Configuration.prototype.options = "";
                    Configuration.prototype.file = $util.newBuffer([]);

                    Configuration.create = function create(properties) {
                        return new Configuration(properties);
                    };

                    Configuration.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.build != null && Object.hasOwnProperty.call(message, "build"))
                            writer.uint32(10).string(message.build);
                        if (message.options != null && Object.hasOwnProperty.call(message, "options"))
                            writer.uint32(18).string(message.options);
                        if (message.file != null && Object.hasOwnProperty.call(message, "file"))
                            writer.uint32(26).bytes(message.file);
                        return writer;
                    };

                    Configuration.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Request.Configuration();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.build = reader.string();
                                    break;
                                }
                            case 2: {
                                    message.options = reader.string();
                                    break;
                                }
                            case 3: {
                                    message.file = reader.bytes();
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    Configuration.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Request.Configuration)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Request.Configuration: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Request.Configuration();
                        if (object.build != null)
                            message.build = String(object.build);
                        if (object.options != null)
                            message.options = String(object.options);
                        if (object.file != null)
                            if (typeof object.file === "string")
                                $util.base64.decode(object.file, message.file = $util.newBuffer($util.base64.length(object.file)), 0);
                            else if (object.file.length >= 0)
                                message.file = object.file;
                        return message;
                    };

                    Configuration.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.defaults) {
                            object.build = "";
                            object.options = "";
                            if (options.bytes === String)
                                object.file = "";
                            else {
                                object.file = [];
                                if (options.bytes !== Array)
                                    object.file = $util.newBuffer(object.file);
                            }
                        }
                        if (message.build != null && Object.hasOwnProperty.call(message, "build"))
                            object.build = message.build;
                        if (message.options != null && Object.hasOwnProperty.call(message, "options"))
                            object.options = message.options;
                        if (message.file != null && Object.hasOwnProperty.call(message, "file"))
                            object.file = options.bytes === String ? $util.base64.encode(message.file, 0, message.file.length) : options.bytes === Array ? Array.prototype.slice.call(message.file) : message.file;
                        return object;
                    };

                    Configuration.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return Configuration;
                })();

                return Request;
            })();

            HotRestartMessage.Reply = (function() {

                function Reply(properties) {
                    if (properties)
                        for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                            if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                this[keys[i]] = properties[keys[i]];
                }

                Reply.prototype.pass_listen_socket = null;
                Reply.prototype.shutdown_admin = null;
                Reply.prototype.stats = null;
                Reply.prototype.configuration = null;

                var $oneOfFields;

                Object.defineProperty(Reply.prototype, "reply", {
                    get: $util.oneOfGetter($oneOfFields = ["pass_listen_socket", "shutdown_admin", "stats", "configuration"]),
                    set: $util.oneOfSetter($oneOfFields)
                });

                Reply.create = function create(properties) {
                    return new Reply(properties);
                };

                Reply.encode = function encode(message, writer, q) {
                    if (!writer)
                        writer = $Writer.create();
                    if (q === undefined)
                        q = 0;
                    if (q > $util.recursionLimit)
                        throw Error("max depth exceeded");
                    if (message.pass_listen_socket != null && Object.hasOwnProperty.call(message, "pass_listen_socket"))
                        $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket.encode(message.pass_listen_socket, writer.uint32(10).fork(), q + 1).ldelim();
                    if (message.shutdown_admin != null && Object.hasOwnProperty.call(message, "shutdown_admin"))
                        $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin.encode(message.shutdown_admin, writer.uint32(18).fork(), q + 1).ldelim();
                    if (message.stats != null && Object.hasOwnProperty.call(message, "stats"))
                        $root.proxy.hot_restart.HotRestartMessage.Reply.Stats.encode(message.stats, writer.uint32(26).fork(), q + 1).ldelim();
                    if (message.configuration != null && Object.hasOwnProperty.call(message, "configuration"))
                        $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration.encode(message.configuration, writer.uint32(34).fork(), q + 1).ldelim();
                    return writer;
                };

                Reply.decode = function decode(reader, length, error, long) {
                    if (!(reader instanceof $Reader))
                        reader = $Reader.create(reader);
                    if (long === undefined)
                        long = 0;
                    if (long > $Reader.recursionLimit)
                        throw Error("maximum nesting depth exceeded");
                    var end, message;
                    if (length === undefined)
                        end = reader.len;
                    else {
                        end = reader.pos + length;
                        if (end > reader.len)
                            throw RangeError("index out of range");
                        length = reader.len;
                        reader.len = end;
                    }
                    message = new $root.proxy.hot_restart.HotRestartMessage.Reply();
                    while (reader.pos < end) {
                        var tag = reader.uint32();
                        if (tag === error)
                            break;
                        switch (tag >>> 3) {
                        case 1: {
                                message.pass_listen_socket = $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 2: {
                                message.shutdown_admin = $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 3: {
                                message.stats = $root.proxy.hot_restart.HotRestartMessage.Reply.Stats.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        case 4: {
                                message.configuration = $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration.decode(reader, reader.uint32(), undefined, long + 1);
                                break;
                            }
                        default:
                            reader.skipType(tag & 7, long);
                            break;
                        }
                    }
                    if (length !== undefined) {
                        if (reader.pos !== end)
                            throw RangeError("index out of range");
                        reader.len = length;
                    }
                    return message;
                };

                Reply.fromObject = function fromObject(object, long) {
                    if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Reply)
                        return object;
                    if (!$util.isObject(object))
                        throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply: object expected");
                    if (long === undefined)
                        long = 0;
                    if (long > $util.recursionLimit)
                        throw Error("maximum nesting depth exceeded");
                    var message = new $root.proxy.hot_restart.HotRestartMessage.Reply();
                    if (object.pass_listen_socket != null) {
                        if (!$util.isObject(object.pass_listen_socket))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.pass_listen_socket: object expected");
                        message.pass_listen_socket = $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket.fromObject(object.pass_listen_socket, long + 1);
                    }
                    if (object.shutdown_admin != null) {
                        if (!$util.isObject(object.shutdown_admin))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.shutdown_admin: object expected");
                        message.shutdown_admin = $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin.fromObject(object.shutdown_admin, long + 1);
                    }
                    if (object.stats != null) {
                        if (!$util.isObject(object.stats))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.stats: object expected");
                        message.stats = $root.proxy.hot_restart.HotRestartMessage.Reply.Stats.fromObject(object.stats, long + 1);
                    }
                    if (object.configuration != null) {
                        if (!$util.isObject(object.configuration))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.configuration: object expected");
                        message.configuration = $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration.fromObject(object.configuration, long + 1);
                    }
                    return message;
                };

                Reply.toObject = function toObject(message, options, q) {
                    if (!options)
                        options = {};
                    if (q === undefined)
                        q = 0;
                    if (q > $util.recursionLimit)
                        throw Error("max depth exceeded");
                    var object = {};
                    if (message.pass_listen_socket != null && Object.hasOwnProperty.call(message, "pass_listen_socket")) {
                        object.pass_listen_socket = $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket.toObject(message.pass_listen_socket, options, q + 1);
                        if (options.oneofs)
                            object.reply = "pass_listen_socket";
                    }
                    if (message.shutdown_admin != null && Object.hasOwnProperty.call(message, "shutdown_admin")) {
                        object.shutdown_admin = $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin.toObject(message.shutdown_admin, options, q + 1);
                        if (options.oneofs)
                            object.reply = "shutdown_admin";
                    }
                    if (message.stats != null && Object.hasOwnProperty.call(message, "stats")) {
                        object.stats = $root.proxy.hot_restart.HotRestartMessage.Reply.Stats.toObject(message.stats, options, q + 1);
                        if (options.oneofs)
                            object.reply = "stats";
                    }
                    if (message.configuration != null && Object.hasOwnProperty.call(message, "configuration")) {
                        object.configuration = $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration.toObject(message.configuration, options, q + 1);
                        if (options.oneofs)
                            object.reply = "configuration";
                    }
                    return object;
                };

                Reply.prototype.toJSON = function toJSON() {
                    return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                };

                Reply.PassListenSocket = (function() {

                    function PassListenSocket(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    PassListenSocket.prototype.fd = 0;

                    PassListenSocket.create = function create(properties) {
                        return new PassListenSocket(properties);
                    };

                    PassListenSocket.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.fd != null && Object.hasOwnProperty.call(message, "fd"))
                            writer.uint32(8).int32(message.fd);
                        return writer;
                    };

                    PassListenSocket.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.fd = reader.int32();
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    PassListenSocket.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Reply.PassListenSocket();
                        if (object.fd != null)
                            message.fd = object.fd | 0;
                        return message;
                    };

                    PassListenSocket.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.defaults)
                            object.fd = 0;
                        if (message.fd != null && Object.hasOwnProperty.call(message, "fd"))
                            object.fd = message.fd;
                        return object;
                    };

                    PassListenSocket.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return PassListenSocket;
                })();

                Reply.ShutdownAdmin = (function() {

                    function ShutdownAdmin(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    ShutdownAdmin.prototype.original_start_time_unix_seconds = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    ShutdownAdmin.prototype.original_start_time_unix_ms = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    ShutdownAdmin.prototype.hot_restart_generation = $util.Long ? $util.Long.fromBits(0,0,true) : 0;

                    ShutdownAdmin.create = function create(properties) {
                        return new ShutdownAdmin(properties);
                    };

                    ShutdownAdmin.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.original_start_time_unix_seconds != null && Object.hasOwnProperty.call(message, "original_start_time_unix_seconds"))
                            writer.uint32(8).uint64(message.original_start_time_unix_seconds);
                        if (message.original_start_time_unix_ms != null && Object.hasOwnProperty.call(message, "original_start_time_unix_ms"))
                            writer.uint32(24).uint64(message.original_start_time_unix_ms);
                        if (message.hot_restart_generation != null && Object.hasOwnProperty.call(message, "hot_restart_generation"))
                            writer.uint32(32).uint64(message.hot_restart_generation);
                        return writer;
                    };

                    ShutdownAdmin.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.original_start_time_unix_seconds = reader.uint64();
                                    break;
                                }
                            case 3: {
                                    message.original_start_time_unix_ms = reader.uint64();
                                    break;
                                }
                            case 4: {
                                    message.hot_restart_generation = reader.uint64();
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    ShutdownAdmin.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Reply.ShutdownAdmin();
                        if (object.original_start_time_unix_seconds != null)
                            if ($util.Long)
                                message.original_start_time_unix_seconds = $util.Long.fromValue(object.original_start_time_unix_seconds, true);
                            else if (typeof object.original_start_time_unix_seconds === "string")
                                message.original_start_time_unix_seconds = parseInt(object.original_start_time_unix_seconds, 10);
                            else if (typeof object.original_start_time_unix_seconds === "number")
                                message.original_start_time_unix_seconds = object.original_start_time_unix_seconds;
                            else if (typeof object.original_start_time_unix_seconds === "object")
                                message.original_start_time_unix_seconds = new $util.LongBits(object.original_start_time_unix_seconds.low >>> 0, object.original_start_time_unix_seconds.high >>> 0).toNumber(true);
                        if (object.original_start_time_unix_ms != null)
                            if ($util.Long)
                                message.original_start_time_unix_ms = $util.Long.fromValue(object.original_start_time_unix_ms, true);
                            else if (typeof object.original_start_time_unix_ms === "string")
                                message.original_start_time_unix_ms = parseInt(object.original_start_time_unix_ms, 10);
                            else if (typeof object.original_start_time_unix_ms === "number")
                                message.original_start_time_unix_ms = object.original_start_time_unix_ms;
                            else if (typeof object.original_start_time_unix_ms === "object")
                                message.original_start_time_unix_ms = new $util.LongBits(object.original_start_time_unix_ms.low >>> 0, object.original_start_time_unix_ms.high >>> 0).toNumber(true);
                        if (object.hot_restart_generation != null)
                            if ($util.Long)
                                message.hot_restart_generation = $util.Long.fromValue(object.hot_restart_generation, true);
                            else if (typeof object.hot_restart_generation === "string")
                                message.hot_restart_generation = parseInt(object.hot_restart_generation, 10);
                            else if (typeof object.hot_restart_generation === "number")
                                message.hot_restart_generation = object.hot_restart_generation;
                            else if (typeof object.hot_restart_generation === "object")
                                message.hot_restart_generation = new $util.LongBits(object.hot_restart_generation.low >>> 0, object.hot_restart_generation.high >>> 0).toNumber(true);
                        return message;
                    };

                    ShutdownAdmin.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.defaults) {
                            if ($util.Long) {
                                var long = new $util.Long(0, 0, true);
                                object.original_start_time_unix_seconds = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                            } else
                                object.original_start_time_unix_seconds = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                            if ($util.Long) {
                                var long = new $util.Long(0, 0, true);
                                object.original_start_time_unix_ms = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                            } else
                                object.original_start_time_unix_ms = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                            if ($util.Long) {
                                var long = new $util.Long(0, 0, true);
                                object.hot_restart_generation = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                            } else
                                object.hot_restart_generation = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                        }
                        if (message.original_start_time_unix_seconds != null && Object.hasOwnProperty.call(message, "original_start_time_unix_seconds"))
                            if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                object.original_start_time_unix_seconds = typeof message.original_start_time_unix_seconds === "number" ? BigInt(message.original_start_time_unix_seconds) : $util.Long.fromBits(message.original_start_time_unix_seconds.low >>> 0, message.original_start_time_unix_seconds.high >>> 0, true).toBigInt();
                            else if (typeof message.original_start_time_unix_seconds === "number")
                                object.original_start_time_unix_seconds = options.longs === String ? String(message.original_start_time_unix_seconds) : message.original_start_time_unix_seconds;
                            else
                                object.original_start_time_unix_seconds = options.longs === String ? $util.Long.prototype.toString.call(message.original_start_time_unix_seconds) : options.longs === Number ? new $util.LongBits(message.original_start_time_unix_seconds.low >>> 0, message.original_start_time_unix_seconds.high >>> 0).toNumber(true) : message.original_start_time_unix_seconds;
                        if (message.original_start_time_unix_ms != null && Object.hasOwnProperty.call(message, "original_start_time_unix_ms"))
                            if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                object.original_start_time_unix_ms = typeof message.original_start_time_unix_ms === "number" ? BigInt(message.original_start_time_unix_ms) : $util.Long.fromBits(message.original_start_time_unix_ms.low >>> 0, message.original_start_time_unix_ms.high >>> 0, true).toBigInt();
                            else if (typeof message.original_start_time_unix_ms === "number")
                                object.original_start_time_unix_ms = options.longs === String ? String(message.original_start_time_unix_ms) : message.original_start_time_unix_ms;
                            else
                                object.original_start_time_unix_ms = options.longs === String ? $util.Long.prototype.toString.call(message.original_start_time_unix_ms) : options.longs === Number ? new $util.LongBits(message.original_start_time_unix_ms.low >>> 0, message.original_start_time_unix_ms.high >>> 0).toNumber(true) : message.original_start_time_unix_ms;
                        if (message.hot_restart_generation != null && Object.hasOwnProperty.call(message, "hot_restart_generation"))
                            if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                object.hot_restart_generation = typeof message.hot_restart_generation === "number" ? BigInt(message.hot_restart_generation) : $util.Long.fromBits(message.hot_restart_generation.low >>> 0, message.hot_restart_generation.high >>> 0, true).toBigInt();
                            else if (typeof message.hot_restart_generation === "number")
                                object.hot_restart_generation = options.longs === String ? String(message.hot_restart_generation) : message.hot_restart_generation;
                            else
                                object.hot_restart_generation = options.longs === String ? $util.Long.prototype.toString.call(message.hot_restart_generation) : options.longs === Number ? new $util.LongBits(message.hot_restart_generation.low >>> 0, message.hot_restart_generation.high >>> 0).toNumber(true) : message.hot_restart_generation;
                        return object;
                    };

                    ShutdownAdmin.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return ShutdownAdmin;
                })();

                Reply.Stats = (function() {

                    function Stats(properties) {
                        this.counter_deltas = {};
                        this.gauges = {};
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    Stats.prototype.memory_allocated = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    Stats.prototype.num_connections = $util.Long ? $util.Long.fromBits(0,0,true) : 0;
                    Stats.prototype.counter_deltas = $util.emptyObject;
                    Stats.prototype.gauges = $util.emptyObject;

                    Stats.create = function create(properties) {
                        return new Stats(properties);
                    };

                    Stats.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.memory_allocated != null && Object.hasOwnProperty.call(message, "memory_allocated"))
                            writer.uint32(8).uint64(message.memory_allocated);
                        if (message.num_connections != null && Object.hasOwnProperty.call(message, "num_connections"))
                            writer.uint32(16).uint64(message.num_connections);
                        if (message.counter_deltas != null && Object.hasOwnProperty.call(message, "counter_deltas"))
                            for (var keys = Object.keys(message.counter_deltas), i = 0; i < keys.length; ++i)
                                writer.uint32(26).fork().uint32(10).string(keys[i]).uint32(16).uint64(message.counter_deltas[keys[i]]).ldelim();
                        if (message.gauges != null && Object.hasOwnProperty.call(message, "gauges"))
                            for (var keys = Object.keys(message.gauges), i = 0; i < keys.length; ++i)
                                writer.uint32(34).fork().uint32(10).string(keys[i]).uint32(16).uint64(message.gauges[keys[i]]).ldelim();
                        return writer;
                    };

                    Stats.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message, key, value;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Reply.Stats();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.memory_allocated = reader.uint64();
                                    break;
                                }
                            case 2: {
                                    message.num_connections = reader.uint64();
                                    break;
                                }
                            case 3: {
                                    if (message.counter_deltas === $util.emptyObject)
                                        message.counter_deltas = {};
                                    var end2 = reader.uint32() + reader.pos;
                                    if (end2 > reader.len)
                                        throw RangeError("index out of range");
                                    reader.len = end2;
                                    key = "";
                                    value = 0;
                                    while (reader.pos < end2) {
                                        var tag2 = reader.uint32();
                                        switch (tag2 >>> 3) {
                                        case 1:
                                            key = reader.string();
                                            break;
                                        case 2:
                                            value = reader.uint64();
                                            break;
                                        default:
                                            reader.skipType(tag2 & 7, long);
                                            break;
                                        }
                                    }
                                    if (reader.pos !== end2)
                                        throw RangeError("index out of range");
                                    reader.len = end;
                                    if (key === "__proto__")
                                        $util.makeProp(message.counter_deltas, key);
                                    message.counter_deltas[key] = value;
                                    break;
                                }
                            case 4: {
                                    if (message.gauges === $util.emptyObject)
                                        message.gauges = {};
                                    var end2 = reader.uint32() + reader.pos;
                                    if (end2 > reader.len)
                                        throw RangeError("index out of range");
                                    reader.len = end2;
                                    key = "";
                                    value = 0;
                                    while (reader.pos < end2) {
                                        var tag2 = reader.uint32();
                                        switch (tag2 >>> 3) {
                                        case 1:
                                            key = reader.string();
                                            break;
                                        case 2:
                                            value = reader.uint64();
                                            break;
                                        default:
                                            reader.skipType(tag2 & 7, long);
                                            break;
                                        }
                                    }
                                    if (reader.pos !== end2)
                                        throw RangeError("index out of range");
                                    reader.len = end;
                                    if (key === "__proto__")
                                        $util.makeProp(message.gauges, key);
                                    message.gauges[key] = value;
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    Stats.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Reply.Stats)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.Stats: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Reply.Stats();
                        if (object.memory_allocated != null)
                            if ($util.Long)
                                message.memory_allocated = $util.Long.fromValue(object.memory_allocated, true);
                            else if (typeof object.memory_allocated === "string")
                                message.memory_allocated = parseInt(object.memory_allocated, 10);
                            else if (typeof object.memory_allocated === "number")
                                message.memory_allocated = object.memory_allocated;
                            else if (typeof object.memory_allocated === "object")
                                message.memory_allocated = new $util.LongBits(object.memory_allocated.low >>> 0, object.memory_allocated.high >>> 0).toNumber(true);
                        if (object.num_connections != null)
                            if ($util.Long)
                                message.num_connections = $util.Long.fromValue(object.num_connections, true);
                            else if (typeof object.num_connections === "string")
                                message.num_connections = parseInt(object.num_connections, 10);
                            else if (typeof object.num_connections === "number")
                                message.num_connections = object.num_connections;
                            else if (typeof object.num_connections === "object")
                                message.num_connections = new $util.LongBits(object.num_connections.low >>> 0, object.num_connections.high >>> 0).toNumber(true);
                        if (object.counter_deltas) {
                            if (!$util.isObject(object.counter_deltas))
                                throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.Stats.counter_deltas: object expected");
                            message.counter_deltas = {};
                            for (var keys = Object.keys(object.counter_deltas), i = 0; i < keys.length; ++i) {
                                if (keys[i] === "__proto__")
                                    $util.makeProp(message.counter_deltas, keys[i]);
                                if ($util.Long)
                                    message.counter_deltas[keys[i]] = $util.Long.fromValue(object.counter_deltas[keys[i]], true);
                                else if (typeof object.counter_deltas[keys[i]] === "string")
                                    message.counter_deltas[keys[i]] = parseInt(object.counter_deltas[keys[i]], 10);
                                else if (typeof object.counter_deltas[keys[i]] === "number")
                                    message.counter_deltas[keys[i]] = object.counter_deltas[keys[i]];
                                else if (typeof object.counter_deltas[keys[i]] === "object")
                                    message.counter_deltas[keys[i]] = new $util.LongBits(object.counter_deltas[keys[i]].low >>> 0, object.counter_deltas[keys[i]].high >>> 0).toNumber(true);
                            }
                        }
                        if (object.gauges) {
                            if (!$util.isObject(object.gauges))
                                throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.Stats.gauges: object expected");
                            message.gauges = {};
                            for (var keys = Object.keys(object.gauges), i = 0; i < keys.length; ++i) {
                                if (keys[i] === "__proto__")
                                    $util.makeProp(message.gauges, keys[i]);
                                if ($util.Long)
                                    message.gauges[keys[i]] = $util.Long.fromValue(object.gauges[keys[i]], true);
                                else if (typeof object.gauges[keys[i]] === "string")
                                    message.gauges[keys[i]] = parseInt(object.gauges[keys[i]], 10);
                                else if (typeof object.gauges[keys[i]] === "number")
                                    message.gauges[keys[i]] = object.gauges[keys[i]];
                                else if (typeof object.gauges[keys[i]] === "object")
                                    message.gauges[keys[i]] = new $util.LongBits(object.gauges[keys[i]].low >>> 0, object.gauges[keys[i]].high >>> 0).toNumber(true);
                            }
                        }
                        return message;
                    };

                    Stats.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.objects || options.defaults) {
                            object.counter_deltas = {};
                            object.gauges = {};
                        }
                        if (options.defaults) {
                            if ($util.Long) {
                                var long = new $util.Long(0, 0, true);
                                object.memory_allocated = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                            } else
                                object.memory_allocated = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                            if ($util.Long) {
                                var long = new $util.Long(0, 0, true);
                                object.num_connections = options.longs === String ? long.toString() : options.longs === Number ? long.toNumber() : typeof BigInt !== "undefined" && options.longs === BigInt ? long.toBigInt() : long;
                            } else
                                object.num_connections = options.longs === String ? "0" : typeof BigInt !== "undefined" && options.longs === BigInt ? BigInt("0") : 0;
                        }
                        if (message.memory_allocated != null && Object.hasOwnProperty.call(message, "memory_allocated"))
                            if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                object.memory_allocated = typeof message.memory_allocated === "number" ? BigInt(message.memory_allocated) : $util.Long.fromBits(message.memory_allocated.low >>> 0, message.memory_allocated.high >>> 0, true).toBigInt();
                            else if (typeof message.memory_allocated === "number")
                                object.memory_allocated = options.longs === String ? String(message.memory_allocated) : message.memory_allocated;
                            else
                                object.memory_allocated = options.longs === String ? $util.Long.prototype.toString.call(message.memory_allocated) : options.longs === Number ? new $util.LongBits(message.memory_allocated.low >>> 0, message.memory_allocated.high >>> 0).toNumber(true) : message.memory_allocated;
                        if (message.num_connections != null && Object.hasOwnProperty.call(message, "num_connections"))
                            if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                object.num_connections = typeof message.num_connections === "number" ? BigInt(message.num_connections) : $util.Long.fromBits(message.num_connections.low >>> 0, message.num_connections.high >>> 0, true).toBigInt();
                            else if (typeof message.num_connections === "number")
                                object.num_connections = options.longs === String ? String(message.num_connections) : message.num_connections;
                            else
                                object.num_connections = options.longs === String ? $util.Long.prototype.toString.call(message.num_connections) : options.longs === Number ? new $util.LongBits(message.num_connections.low >>> 0, message.num_connections.high >>> 0).toNumber(true) : message.num_connections;
                        var keys2;
                        if (message.counter_deltas && (keys2 = Object.keys(message.counter_deltas)).length) {
                            object.counter_deltas = {};
                            for (var j = 0; j < keys2.length; ++j) {
                                if (keys2[j] === "__proto__")
                                    $util.makeProp(object.counter_deltas, keys2[j]);
                                if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                    object.counter_deltas[keys2[j]] = typeof message.counter_deltas[keys2[j]] === "number" ? BigInt(message.counter_deltas[keys2[j]]) : $util.Long.fromBits(message.counter_deltas[keys2[j]].low >>> 0, message.counter_deltas[keys2[j]].high >>> 0, true).toBigInt();
                                else if (typeof message.counter_deltas[keys2[j]] === "number")
                                    object.counter_deltas[keys2[j]] = options.longs === String ? String(message.counter_deltas[keys2[j]]) : message.counter_deltas[keys2[j]];
                                else
                                    object.counter_deltas[keys2[j]] = options.longs === String ? $util.Long.prototype.toString.call(message.counter_deltas[keys2[j]]) : options.longs === Number ? new $util.LongBits(message.counter_deltas[keys2[j]].low >>> 0, message.counter_deltas[keys2[j]].high >>> 0).toNumber(true) : message.counter_deltas[keys2[j]];
                            }
                        }
                        if (message.gauges && (keys2 = Object.keys(message.gauges)).length) {
                            object.gauges = {};
                            for (var j = 0; j < keys2.length; ++j) {
                                if (keys2[j] === "__proto__")
                                    $util.makeProp(object.gauges, keys2[j]);
                                if (typeof BigInt !== "undefined" && options.longs === BigInt)
                                    object.gauges[keys2[j]] = typeof message.gauges[keys2[j]] === "number" ? BigInt(message.gauges[keys2[j]]) : $util.Long.fromBits(message.gauges[keys2[j]].low >>> 0, message.gauges[keys2[j]].high >>> 0, true).toBigInt();
                                else if (typeof message.gauges[keys2[j]] === "number")
                                    object.gauges[keys2[j]] = options.longs === String ? String(message.gauges[keys2[j]]) : message.gauges[keys2[j]];
                                else
                                    object.gauges[keys2[j]] = options.longs === String ? $util.Long.prototype.toString.call(message.gauges[keys2[j]]) : options.longs === Number ? new $util.LongBits(message.gauges[keys2[j]].low >>> 0, message.gauges[keys2[j]].high >>> 0).toNumber(true) : message.gauges[keys2[j]];
                            }
                        }
                        return object;
                    };

                    Stats.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return Stats;
                })();

                Reply.Configuration = (function() {

                    function Configuration(properties) {
                        if (properties)
                            for (var keys = Object.keys(properties), i = 0; i < keys.length; ++i)
                                if (properties[keys[i]] != null && keys[i] !== "__proto__")
                                    this[keys[i]] = properties[keys[i]];
                    }

                    Configuration.prototype.read = $util.newBuffer([]);

                    Configuration.create = function create(properties) {
                        return new Configuration(properties);
                    };

                    Configuration.encode = function encode(message, writer, q) {
                        if (!writer)
                            writer = $Writer.create();
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        if (message.read != null && Object.hasOwnProperty.call(message, "read"))
                            writer.uint32(10).bytes(message.read);
                        return writer;
                    };

                    Configuration.decode = function decode(reader, length, error, long) {
                        if (!(reader instanceof $Reader))
                            reader = $Reader.create(reader);
                        if (long === undefined)
                            long = 0;
                        if (long > $Reader.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var end, message;
                        if (length === undefined)
                            end = reader.len;
                        else {
                            end = reader.pos + length;
                            if (end > reader.len)
                                throw RangeError("index out of range");
                            length = reader.len;
                            reader.len = end;
                        }
                        message = new $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration();
                        while (reader.pos < end) {
                            var tag = reader.uint32();
                            if (tag === error)
                                break;
                            switch (tag >>> 3) {
                            case 1: {
                                    message.read = reader.bytes();
                                    break;
                                }
                            default:
                                reader.skipType(tag & 7, long);
                                break;
                            }
                        }
                        if (length !== undefined) {
                            if (reader.pos !== end)
                                throw RangeError("index out of range");
                            reader.len = length;
                        }
                        return message;
                    };

                    Configuration.fromObject = function fromObject(object, long) {
                        if (object instanceof $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration)
                            return object;
                        if (!$util.isObject(object))
                            throw TypeError(".proxy.hot_restart.HotRestartMessage.Reply.Configuration: object expected");
                        if (long === undefined)
                            long = 0;
                        if (long > $util.recursionLimit)
                            throw Error("maximum nesting depth exceeded");
                        var message = new $root.proxy.hot_restart.HotRestartMessage.Reply.Configuration();
                        if (object.read != null)
                            if (typeof object.read === "string")
                                $util.base64.decode(object.read, message.read = $util.newBuffer($util.base64.length(object.read)), 0);
                            else if (object.read.length >= 0)
                                message.read = object.read;
                        return message;
                    };

                    Configuration.toObject = function toObject(message, options, q) {
                        if (!options)
                            options = {};
                        if (q === undefined)
                            q = 0;
                        if (q > $util.recursionLimit)
                            throw Error("max depth exceeded");
                        var object = {};
                        if (options.defaults)
                            if (options.bytes === String)
                                object.read = "";
                            else {
                                object.read = [];
                                if (options.bytes !== Array)
                                    object.read = $util.newBuffer(object.read);
                            }
                        if (message.read != null && Object.hasOwnProperty.call(message, "read"))
                            object.read = options.bytes === String ? $util.base64.encode(message.read, 0, message.read.length) : options.bytes === Array ? Array.prototype.slice.call(message.read) : message.read;
                        return object;
                    };

                    Configuration.prototype.toJSON = function toJSON() {
                        return this.constructor.toObject(this, $protobuf.util.toJSONOptions);
                    };

                    return Configuration;
                })();

                return Reply;
            })();

            return HotRestartMessage;
        })();

        return hot_restart;
    })();

    return proxy;
})();

module.exports = $root;

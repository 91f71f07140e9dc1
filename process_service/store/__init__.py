"""process_service's store access: the only modules that know the documents' field names and update operators (process_service/process_model.py holds the records)."""
